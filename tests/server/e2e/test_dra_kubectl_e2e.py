"""DRA in ``kubesched serve``, driven with the real kubectl: nodes with 8 simulated GPUs
each (the simulated DRA driver's ResourceSlices from ``--node-pool``), a Job whose pods
claim 2 GPUs of one model through a ResourceClaimTemplate, and a pod on a standalone
claim. Everything is real: the API server, the resourceclaim and Job controllers, the
scheduler (DynamicResources allocates, PreBind writes finalizer, ``status.allocation`` and
``reservedFor``), the simulated nodes that finish pods after ``kubesched.io/run-duration``.

Expected facts: what PreBind writes (finalizer ``resource.kubernetes.io/delete-protection``,
``devices.results`` request/driver/pool/device, ``nodeSelector`` matchFields
``metadata.name In [node]``, ``reservedFor`` ``{resource: pods, name, uid}``) is the
"after a pod is chosen" part of ``../shared/fidelity-dra/README.md``; claim names and the
``resource.kubernetes.io/pod-claim-name`` annotation are upstream's resourceclaim
controller's; ``Complete`` with reason ``CompletionsReached`` is upstream's Job controller's.
Capacity by hand: 2 A100 nodes x 8 GPUs = 16 = 8 pods x 2 GPUs, so all eight pods run at
once only if no GPU is given twice; the H100 node must get none of them."""

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
POOL = [{"count": 2, "namePrefix": "a100", "capacity": {"cpu": "16", "memory": "64Gi"},
         "dra": [{"driver": DRIVER, "devices": 8, "attributes": {"model": "A100"}, "capacity": {"memory": "80Gi"}}]},
        {"count": 1, "namePrefix": "h100", "capacity": {"cpu": "16", "memory": "64Gi"},
         "dra": [{"driver": DRIVER, "devices": 8, "attributes": {"model": "H100"}, "capacity": {"memory": "80Gi"}}]}]
MANIFESTS = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {DRIVER}}}
spec:
  selectors:
  - cel: {{expression: 'device.driver == "{DRIVER}"'}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: two-a100}}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: {DRIVER}
          count: 2
          selectors:
          - cel: {{expression: 'device.attributes["{DRIVER}"].model == "A100"'}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  completions: 8
  parallelism: 8
  template:
    metadata:
      annotations: {{kubesched.io/run-duration: 25s}}
    spec:
      restartPolicy: Never
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: two-a100
      containers:
      - name: train
        image: trainer
        resources:
          requests: {{cpu: 100m}}
          claims: [{{name: gpus}}]
"""
STANDALONE = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: one-h100}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: {DRIVER}
        selectors:
        - cel: {{expression: 'device.attributes["{DRIVER}"].model == "H100"'}}
---
apiVersion: v1
kind: Pod
metadata:
  name: probe
  annotations: {{kubesched.io/run-duration: 2s}}
spec:
  restartPolicy: Never
  resourceClaims:
  - name: gpu
    resourceClaimName: one-h100
  containers:
  - name: c
    image: busybox
    resources: {{claims: [{{name: gpu}}]}}
"""


def items(server: Server, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in json.loads(server.kubectl("get", kind, "-o", "json").stdout)["items"]}


def test_job_pods_get_two_gpus_each_and_release_them_when_they_finish(
        spawn: Callable[..., Server], tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(yaml.safe_dump(POOL))
    server = spawn("--node-pool", str(pool), "--pod-start-delay", "0.2", "--controller-seed", "1")
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    slices = items(server, "resourceslices")
    assert sorted(slices) == [f"a100-01-{DRIVER}", f"a100-02-{DRIVER}", f"h100-01-{DRIVER}"]
    s = slices[f"a100-01-{DRIVER}"]["spec"]
    assert (s["nodeName"], s["driver"], s["pool"]) == ("a100-01", DRIVER,
                                                       {"name": "a100-01", "generation": 1, "resourceSliceCount": 1})
    assert [d["name"] for d in s["devices"]] == [f"gpu-{i}" for i in range(8)]
    assert s["devices"][0]["attributes"]["model"] == {"string": "A100"}
    server.kubectl("apply", "-f", "-", input=MANIFESTS)

    # all eight pods running at once: 16 A100 GPUs, two each
    def all_running() -> dict[str, dict[str, Any]] | None:
        pods = items(server, "pods")
        ok = len(pods) == 8 and all(p["status"].get("phase") == "Running" for p in pods.values())
        return pods if ok else None

    pods = eventually(all_running, timeout=120)
    claims = items(server, "resourceclaims")
    assert len(claims) == 8
    used: list[tuple[str, str]] = []
    for name, claim in claims.items():
        meta, status = claim["metadata"], claim["status"]
        pod_name = meta["ownerReferences"][0]["name"]
        pod = pods[pod_name]
        assert name.startswith(f"{pod_name}-gpus-") and len(name) == len(f"{pod_name}-gpus-") + 5
        assert meta["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpus"
        assert meta["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
        assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        assert pod["status"]["resourceClaimStatuses"] == [{"name": "gpus", "resourceClaimName": name}]
        node = pod["spec"]["nodeName"]
        assert node.startswith("a100-")
        results = status["allocation"]["devices"]["results"]
        assert [(r["request"], r["driver"], r["pool"]) for r in results] == [("gpus", DRIVER, node)] * 2
        assert status["allocation"]["nodeSelector"] == {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        assert status["reservedFor"] == [{"resource": "pods", "name": pod_name, "uid": pod["metadata"]["uid"]}]
        used += [(r["pool"], r["device"]) for r in results]
    assert len(used) == 16 and len(set(used)) == 16  # no GPU given twice
    table = server.kubectl("get", "resourceclaims").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATE", "AGE"] and all(" allocated,reserved " in r for r in table[1:])

    # the Job completes; the claims made for its pods are released and deleted
    server.kubectl("wait", "--for=condition=complete", "job/train", "--timeout=120s", timeout=150)
    job = items(server, "jobs")["train"]
    assert job["status"]["succeeded"] == 8
    complete = next(c for c in job["status"]["conditions"] if c["type"] == "Complete")
    assert (complete["status"], complete["reason"]) == ("True", "CompletionsReached")
    eventually(lambda: not items(server, "resourceclaims"), timeout=60)
    assert all(p["status"]["phase"] == "Succeeded" for p in items(server, "pods").values())

    # a standalone claim: allocated on the H100 node, then deallocated (kept) when its pod is done
    server.kubectl("apply", "-f", "-", input=STANDALONE)
    probe = eventually(lambda: items(server, "pods")["probe"]["spec"].get("nodeName"), timeout=60)
    assert probe == "h100-01"

    def released() -> dict[str, Any] | None:
        # upstream's resourceclaim controller clears the allocation (a status write) and then
        # removes its finalizer (a second write): released once both are done
        claim = items(server, "resourceclaims").get("one-h100")
        if claim is None or claim.get("status") or claim["metadata"].get("finalizers"):
            return None
        return claim

    claim = eventually(released, timeout=60)
    assert items(server, "pods")["probe"]["status"]["phase"] == "Succeeded"
    assert not claim.get("status") and not claim["metadata"].get("finalizers")
