"""The resourceclaim and Job controllers of ``kubesched serve`` in an in-process cluster
(a toy binder stands in for the scheduler). Upstream facts:
``pkg/controller/resourceclaim/controller.go`` (claims from templates with generateName
``<pod>-<claim>-`` shortened to 57 characters, the ``resource.kubernetes.io/pod-claim-name``
annotation, the pod as owner, ``status.resourceClaimStatuses``; reservations of done pods
removed, unreserved claims deallocated, claims of done pods deleted) and
``pkg/controller/job/job_controller.go`` (``failed > backoffLimit`` fails the Job with
``BackoffLimitExceeded``; ``succeeded == completions`` completes it with
``CompletionsReached``; at most ``parallelism`` pods active)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cluster_harness import Cluster, eventually

from kubesched.server.controllers.resourceclaim import generate_name_base
from kubesched.server.nodes import NodePool

CLAIMS = "resourceclaims.resource.k8s.io"
SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


@pytest.fixture
def cluster(tmp_path: Path) -> Any:
    c = Cluster(tmp_path / "data", [NodePool(2, "node", {"cpu": "8", "memory": "16Gi", "pods": "110"})])
    yield c
    c.stop()


def job(name: str, *, completions: int, parallelism: int, backoff: int = 6, exit_code: int = 0,
        duration: str = "300ms") -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"completions": completions, "parallelism": parallelism, "backoffLimit": backoff,
                     "template": {"metadata": {"annotations": {"kubesched.io/run-duration": duration,
                                                               "kubesched.io/exit-code": str(exit_code)}},
                                  "spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}}}}


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


def test_job_completes_after_completions_with_at_most_parallelism_active(cluster: Cluster) -> None:
    cluster.registry.create("jobs.batch", "default", job("j", completions=3, parallelism=2))
    peak = 0

    def complete() -> dict[str, Any] | None:
        nonlocal peak
        peak = max(peak, sum(1 for p in cluster.pods() if p["status"].get("phase") in ("Pending", "Running", None)))
        j = cluster.get("jobs.batch", "default", "j")
        return j if j and condition(j, "Complete") else None

    j = eventually(complete, timeout=60, interval=0.02)
    assert j["status"]["succeeded"] == 3 and "failed" not in j["status"] and "active" not in j["status"]
    assert condition(j, "Complete")["reason"] == "CompletionsReached"  # type: ignore[index]
    assert condition(j, "SuccessCriteriaMet")["status"] == "True"  # type: ignore[index]
    assert j["status"]["completionTime"] and j["status"]["startTime"]
    pods = cluster.pods()
    assert len(pods) == 3 and all(p["status"]["phase"] == "Succeeded" for p in pods)
    assert all(p["metadata"]["name"].startswith("j-") and len(p["metadata"]["name"]) == 7 for p in pods)
    assert 1 <= peak <= 2


def test_job_fails_when_failures_exceed_the_backoff_limit(cluster: Cluster) -> None:
    """backoffLimit 1: the first failure is retried, the second fails the Job (2 > 1)."""
    cluster.registry.create("jobs.batch", "default", job("f", completions=1, parallelism=1, backoff=1, exit_code=1))
    j = eventually(lambda: (x := cluster.get("jobs.batch", "default", "f")) and condition(x, "Failed") and x,
                   timeout=60)
    cond = condition(j, "Failed")
    assert cond is not None and (cond["reason"], cond["message"]) == (
        "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert j["status"]["failed"] == 2 and "succeeded" not in j["status"]
    pods = cluster.pods()
    assert len(pods) == 2 and all(p["status"]["phase"] == "Failed" for p in pods)
    assert pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1


def test_generate_name_base_is_shortened_as_upstream() -> None:
    """``<pod>-<claim>-`` over 57 characters: its first 28 and last 28 characters."""
    assert generate_name_base("train-abcde", "gpus") == "train-abcde-gpus-"
    base = "p" * 60 + "-gpu-"  # 65 characters
    assert generate_name_base("p" * 60, "gpu") == base[:28] + base[-28:] == "p" * 51 + "-gpu-"


def pod(name: str, claims: list[dict[str, Any]], duration: str | None = None) -> dict[str, Any]:
    ann = {"kubesched.io/run-duration": duration} if duration else {}
    return {"metadata": {"name": name, "annotations": ann},
            "spec": {"restartPolicy": "Never", "resourceClaims": claims, "containers": [{"name": "c", "image": "i"}]}}


def reserve(cluster: Cluster, claim_name: str, p: dict[str, Any], node: str) -> None:
    """What the scheduler's PreBind writes (../shared/fidelity-dra/README.md)."""
    c = cluster.registry.get(CLAIMS, "default", claim_name)
    c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    c = cluster.registry.update(CLAIMS, "default", claim_name, c)
    c["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": node, "device": "gpu-0"}]}},
        "reservedFor": [{"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}]}
    cluster.registry.update(CLAIMS, "default", claim_name, c, subresource="status")


def test_claim_from_template_recorded_on_the_pod_then_released_and_deleted_when_the_pod_is_done(
        cluster: Cluster) -> None:
    created = cluster.registry.create("pods", "default", pod("worker", [
        {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}], duration="1s"))
    # no template yet: no claim, a warning event
    eventually(lambda: any(e["reason"] == "FindPodClaimTemplate"
                           for e in cluster.registry.list("events", "default")["items"]))
    assert not cluster.registry.list(CLAIMS, "default")["items"]
    cluster.registry.create("resourceclaimtemplates.resource.k8s.io", "default", {
        "metadata": {"name": "one-gpu"}, "spec": {"metadata": {"labels": {"team": "ml"}}, "spec": SPEC}})
    claim = eventually(lambda: (items := cluster.registry.list(CLAIMS, "default")["items"]) and items[0])
    meta = claim["metadata"]
    assert meta["name"].startswith("worker-gpu-") and len(meta["name"]) == len("worker-gpu-") + 5
    assert meta["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert meta["labels"] == {"team": "ml"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "worker",
                                        "uid": created["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    eventually(lambda: cluster.get("pods", "default", "worker")["status"].get("resourceClaimStatuses") == [
        {"name": "gpu", "resourceClaimName": meta["name"]}])
    node = eventually(lambda: cluster.get("pods", "default", "worker")["spec"].get("nodeName"))
    reserve(cluster, meta["name"], created, node)
    # the pod finishes after 1 s: its claim is released, then deleted (its pod is done)
    eventually(lambda: cluster.get(CLAIMS, "default", meta["name"]) is None, timeout=30)
    assert cluster.get("pods", "default", "worker")["status"]["phase"] == "Succeeded"


def test_standalone_claim_is_deallocated_when_its_pod_is_deleted_and_kept(cluster: Cluster) -> None:
    cluster.registry.create(CLAIMS, "default", {"metadata": {"name": "shared"}, "spec": SPEC})
    p = cluster.registry.create("pods", "default", pod("user", [{"name": "gpu", "resourceClaimName": "shared"}]))
    node = eventually(lambda: cluster.get("pods", "default", "user")["spec"].get("nodeName"))
    reserve(cluster, "shared", p, node)
    assert cluster.get(CLAIMS, "default", "shared")["status"]["reservedFor"]  # type: ignore[index]
    cluster.registry.delete("pods", "default", "user")

    def released() -> dict[str, Any] | None:
        c = cluster.get(CLAIMS, "default", "shared")
        return c if c is not None and not c.get("status") and not c["metadata"].get("finalizers") else None

    claim = eventually(released, timeout=30)
    assert claim["spec"] == {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}}
