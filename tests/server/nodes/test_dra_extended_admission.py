"""Pods whose extended resources the scheduler allocated through a claim (DRAExtendedResource):
the simulated kubelet does not count them against a node that has none of them in
allocatable (upstream fit.go ``shouldDelegateResourceToDRA``, which the kubelet's admission
calls through ``Fits``), and the resourceclaim controller follows the claim named in
``status.extendedResourceClaimStatus`` (upstream pkg/controller/resourceclaim). Expected
values by hand: a node with cpu 1 and no example.com/gpu, a pod asking cpu 100m and 2 GPUs."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.controllers.resourceclaim import claim_names
from kubesched.server.nodes.failing import FailureDriver

Obj = dict[str, Any]
NODE: Obj = {"metadata": {"name": "n1", "uid": "node-uid", "resourceVersion": "1"},
             "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}}
STATUS = {"resourceClaimName": "p-extended-resources-abcde",
          "requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu",
                               "requestName": "container-0-request-1"}]}


def pod(status: Obj | None) -> Obj:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1", "generation": 1},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"cpu": "100m", "example.com/gpu": "2"}, "limits": {"example.com/gpu": "2"}}}]},
            "status": {"phase": "Pending", **({"extendedResourceClaimStatus": status} if status else {})}}


@pytest.mark.parametrize("status,rejected", [(None, "OutOfexample.com/gpu"), (STATUS, None)],
                         ids=["device plugin resource missing", "allocated through the claim"])
def test_admission(status: Obj | None, rejected: str | None) -> None:
    driver = FailureDriver(lambda name: pytest.fail("no event expected"))
    got = driver._resources(pod(status), NODE, [])
    assert (got[0] if got else None) == rejected


def test_claim_names_include_the_extended_resource_claim() -> None:
    assert claim_names(pod(STATUS)) == ["p-extended-resources-abcde"]
    assert claim_names(pod(None)) == []
