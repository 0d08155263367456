"""``KubeDra`` against ``kubesched serve``'s API server over HTTP: the four DRA informers
feed the lister DynamicResources reads; PreBind's write is what upstream's ``bindClaim``
sends (``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``: the
finalizer by an update of the claim, then ``allocation`` and ``reservedFor`` by an update
of its status), each with the resourceVersion read, so a stale one fails
(``DraWriteError``); the written claim is read back before the informer has caught up."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from kube_helpers import eventually

from kubesched.server.apiserver.server import ApiServer
from kubesched.cluster.kube import KubeClient
from kubesched.cluster.kube.dra import KubeDra
from kubesched.cluster.kube.informer import Informer
from kubesched.cluster.kube.resources import DRA_RESOURCES
from kubesched.framework.dra import DraWriteError

CLAIMS = "resourceclaims.resource.k8s.io"
FINALIZER = "resource.kubernetes.io/delete-protection"


@pytest.fixture
def dra(client: KubeClient) -> Iterator[KubeDra]:
    infs = [Informer(client, r) for r in DRA_RESOURCES]
    out = KubeDra(client, classes=infs[0], slices=infs[1], claims=infs[2], templates=infs[3])
    for i in infs:
        i.on_add = lambda o: out.changed()
        i.on_update = lambda a, b: out.changed()
        i.start()
    for i in infs:
        assert i.wait_for_sync(10)
    yield out
    for i in infs:
        i.stop()


def test_lister_reads_the_dra_objects_and_prebind_writes_finalizer_then_status(apiserver: ApiServer,
                                                                                dra: KubeDra) -> None:
    reg = apiserver.registry
    generation = dra.generation
    reg.create("deviceclasses.resource.k8s.io", None, {"metadata": {"name": "gpu"}, "spec": {
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    reg.create("resourceslices.resource.k8s.io", None, {"metadata": {"name": "n1-gpu"}, "spec": {
        "driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})
    reg.create(CLAIMS, "ns", {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    eventually(lambda: dra.device_class("gpu") and dra.resource_slices() and dra.resource_claim("ns", "c"))
    assert dra.generation > generation
    assert [d.name for d in dra.resource_slices()[0].devices] == ["gpu-0", "gpu-1"]
    claim = dra.resource_claim("ns", "c")
    assert claim is not None and claim.spec.requests[0].exactly is not None
    assert claim.spec.requests[0].exactly.count == 1  # defaulted by the server
    assert [c.name for c in dra.resource_claims()] == ["c"]

    raw = copy.deepcopy(claim.raw)
    raw["metadata"]["finalizers"] = [FINALIZER]
    raw["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-1"}]}},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "uid-p"}]}
    written = dra.update_claim(raw)
    assert written.allocated_devices == (("gpu.example.com", "n1", "gpu-1"),)
    assert dra.resource_claim("ns", "c") is not None
    assert dra.resource_claim("ns", "c").reserved_for_pod("uid-p")  # type: ignore[union-attr]
    stored = reg.get(CLAIMS, "ns", "c")
    assert stored["metadata"]["finalizers"] == [FINALIZER]
    assert stored["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-1"
    assert stored["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    # two writes: the finalizer (an update of the claim), then the status
    assert int(stored["metadata"]["resourceVersion"]) > int(claim.raw["metadata"]["resourceVersion"]) + 1
    eventually(lambda: (c := dra.resource_claim("ns", "c")) is not None and c.raw["metadata"]["resourceVersion"]
               == stored["metadata"]["resourceVersion"])

    # a status write from a stale read: refused
    stale = copy.deepcopy(claim.raw)
    stale["status"] = {"reservedFor": [{"resource": "pods", "name": "q", "uid": "uid-q"}]}
    stale["metadata"]["finalizers"] = [FINALIZER]
    with pytest.raises(DraWriteError, match="modified"):
        dra.update_claim(stale)
