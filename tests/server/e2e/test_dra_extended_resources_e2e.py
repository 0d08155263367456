"""Extended resources backed by DRA in ``kubesched serve --kubernetes-version 1.36``, driven
with kubectl: a DeviceClass with ``extendedResourceName: example.com/gpu``, nodes with
simulated GPUs in ResourceSlices (none advertises ``example.com/gpu`` in allocatable), a pod
asking for ``example.com/gpu: 2`` in its container's resources and no ResourceClaim.

Expected facts, from upstream's extendeddynamicresources.go (``createExtendedResourceClaimInAPI``,
``bindClaim``, ``patchPodExtendedResourceClaimStatus``) and its dynamicresources_test.go
fixtures (``extendedResourceClaim``): the scheduler creates a claim named from
``generateName: <pod>-extended-resources-``, annotated
``resource.kubernetes.io/extended-resource-claim: "true"``, controlled by the pod, with one
request ``container-0-request-1`` (``example.com/gpu`` is the second of the container's sorted
request names ``cpu``, ``example.com/gpu``) of class ``gpu.example.com`` and count 2; it is
allocated two devices of the chosen node and reserved for the pod; the pod's
``status.extendedResourceClaimStatus`` names it with the container/resource/request mapping.
When the pod has finished, the resourceclaim controller releases and deletes the claim (it is
the pod's: upstream's controller syncs the claim named in ``extendedResourceClaimStatus``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from serve_harness import Server, eventually

pytestmark = pytest.mark.slow

DRIVER = "gpu.example.com"
POOL = [{"count": 2, "namePrefix": "gpu", "capacity": {"cpu": "16", "memory": "64Gi"},
         "dra": [{"driver": DRIVER, "devices": 2, "attributes": {"model": "A100"}}]}]
MANIFESTS = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {DRIVER}}}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {{expression: 'device.driver == "{DRIVER}"'}}
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  annotations: {{kubesched.io/run-duration: 3s}}
spec:
  restartPolicy: Never
  containers:
  - name: train
    image: trainer
    resources:
      requests: {{cpu: 100m, example.com/gpu: 2}}
      limits: {{example.com/gpu: 2}}
"""


def items(server: Server, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in json.loads(server.kubectl("get", kind, "-o", "json").stdout)["items"]}


def test_pod_with_extended_resource_gets_a_claim_at_binding(spawn: Callable[..., Server], tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(yaml.safe_dump(POOL))
    server = spawn("--node-pool", str(pool), "--kubernetes-version", "1.36")
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    server.kubectl("apply", "-f", "-", input=MANIFESTS)
    node = eventually(lambda: items(server, "pods")["trainer"]["spec"].get("nodeName"), timeout=60)
    pod = eventually(lambda: (p := items(server, "pods")["trainer"])["status"].get("extendedResourceClaimStatus")
                     and p, timeout=30)
    claims = items(server, "resourceclaims")
    assert len(claims) == 1
    name, claim = next(iter(claims.items()))
    meta = claim["metadata"]
    assert name.startswith("trainer-extended-resources-") and meta["generateName"] == "trainer-extended-resources-"
    assert meta["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
    owner = meta["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Pod", "trainer", pod["metadata"]["uid"], True)
    assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    (request,) = claim["spec"]["devices"]["requests"]
    assert request["name"] == "container-0-request-1"
    assert (request["exactly"]["deviceClassName"], request["exactly"]["count"]) == (DRIVER, 2)
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["pool"]) for r in results] == [("container-0-request-1", node)] * 2
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]
    assert pod["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "train", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-1"}],
        "resourceClaimName": name}
    eventually(lambda: items(server, "pods")["trainer"]["status"].get("phase") == "Succeeded", timeout=60)
    eventually(lambda: not items(server, "resourceclaims"), timeout=60)
