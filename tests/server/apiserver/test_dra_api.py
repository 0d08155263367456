"""The resource.k8s.io/v1 kinds and batch/v1 Jobs in the registry: upstream's defaulting
(``pkg/apis/resource/v1/defaults.go``: ``exactly.allocationMode`` ExactCount, ``count`` 1;
``pkg/apis/batch/v1/defaults.go``), the validation that matters, update rules
(``pkg/registry/resource/resourceclaim/strategy.go``: spec immutable, status subresource),
and the ``kubectl get`` columns (``printers.go``: ``resourceClaimState``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.resources import TABLE
from kubesched.server.apiserver.printers.tables import to_table
from kubesched.server.store import Store

T0 = 1_800_000_000.0


@pytest.fixture
def reg(tmp_path: Path):
    store = Store(tmp_path / "db")
    r = Registry(store, clock=lambda: T0)
    r.bootstrap()
    yield r
    store.close()


def claim(name: str = "c", **exactly: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", **exactly}}]}}}


def test_claim_request_defaults_exact_count_one(reg: Registry) -> None:
    out = reg.create("resourceclaims.resource.k8s.io", "default", claim())
    assert out["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}


def test_all_mode_gets_no_count(reg: Registry) -> None:
    out = reg.create("resourceclaims.resource.k8s.io", "default", claim(allocationMode="All"))
    assert out["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "gpu", "allocationMode": "All"}


def test_template_defaults_inner_spec(reg: Registry) -> None:
    tmpl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"}, "spec": {"spec": claim()["spec"]}}
    out = reg.create("resourceclaimtemplates.resource.k8s.io", "default", tmpl)
    assert out["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1


@pytest.mark.parametrize("bad, field", [
    (claim(count=0), "spec.devices.requests[0].exactly.count"),
    (claim(allocationMode="Some"), "spec.devices.requests[0].exactly.allocationMode"),
    ({**claim(), "spec": {"devices": {"requests": [{"name": "gpu"}]}}}, "spec.devices.requests[0]"),
], ids=["count-zero", "bad-mode", "no-exactly"])
def test_invalid_claims_are_422_naming_the_field(reg: Registry, bad: dict[str, Any], field: str) -> None:
    with pytest.raises(ApiError) as ei:
        reg.create("resourceclaims.resource.k8s.io", "default", bad)
    assert ei.value.code == 422
    assert field in str(ei.value.message)


def test_claim_spec_is_immutable_and_status_only_via_subresource(reg: Registry) -> None:
    created = reg.create("resourceclaims.resource.k8s.io", "default", claim())
    changed = claim(count=2)
    changed["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    with pytest.raises(ApiError) as ei:
        reg.update("resourceclaims.resource.k8s.io", "default", "c", changed)
    assert ei.value.code == 422 and "field is immutable" in ei.value.message
    alloc = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                       "device": "gpu-0"}]}}
    # the main resource ignores status
    body = {**created, "status": {"allocation": alloc}}
    out = reg.update("resourceclaims.resource.k8s.io", "default", "c", body)
    assert "allocation" not in (out.get("status") or {})
    # the status subresource writes it, with the resourceVersion checked
    body = {**out, "status": {"allocation": alloc, "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}}
    out2 = reg.update("resourceclaims.resource.k8s.io", "default", "c", body, subresource="status")
    assert out2["status"]["allocation"] == alloc
    with pytest.raises(ApiError) as ei:
        reg.update("resourceclaims.resource.k8s.io", "default", "c", body, subresource="status")  # stale rv
    assert ei.value.code == 409


def test_claim_state_column(reg: Registry) -> None:
    """printers.go resourceClaimState: pending, then allocated,reserved."""
    created = reg.create("resourceclaims.resource.k8s.io", "default", claim())
    res = TABLE["resourceclaims.resource.k8s.io"]
    assert to_table(res, [created], T0)["rows"][0]["cells"][:2] == ["c", "pending"]
    created["status"] = {"allocation": {"devices": {"results": []}},
                         "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    assert to_table(res, [created], T0)["rows"][0]["cells"][1] == "allocated,reserved"


def test_slice_validation_and_immutable_node(reg: Registry) -> None:
    s = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "A100"}}}]}}
    out = reg.create("resourceslices.resource.k8s.io", None, s)
    out["spec"]["nodeName"] = "n2"
    with pytest.raises(ApiError) as ei:
        reg.update("resourceslices.resource.k8s.io", None, "n1-gpu", out)
    assert ei.value.code == 422 and "spec.nodeName" in ei.value.message
    bad = {**s, "metadata": {"name": "x"}, "spec": {**s["spec"], "pool": {"name": "n1", "resourceSliceCount": 0}}}
    with pytest.raises(ApiError) as ei:
        reg.create("resourceslices.resource.k8s.io", None, bad)
    assert ei.value.code == 422 and "spec.pool.resourceSliceCount" in ei.value.message


def test_pod_resource_claims_round_trip_and_validate(reg: Registry) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                    "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}}
    out = reg.create("pods", "default", pod)
    assert out["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    out["status"] = {**(out.get("status") or {}),
                     "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}]}
    out = reg.update("pods", "default", "p", out, subresource="status")
    assert reg.get("pods", "default", "p")["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": "p-gpu-abcde"}]
    bad = {**pod, "metadata": {"name": "q", "namespace": "default"},
           "spec": {**pod["spec"], "containers": [{"name": "c", "image": "i",
                                                   "resources": {"claims": [{"name": "nic"}]}}]}}
    with pytest.raises(ApiError) as ei:
        reg.create("pods", "default", bad)
    assert ei.value.code == 422 and "spec.containers[0].resources.claims[0]" in ei.value.message


def job(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}},
                     **spec}}


def test_job_defaults_and_generated_selector(reg: Registry) -> None:
    """batch/v1 SetDefaults_Job and the registry's generateSelector."""
    out = reg.create("jobs.batch", "default", job())
    spec, uid = out["spec"], out["metadata"]["uid"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"], spec["completionMode"],
            spec["suspend"], spec["podReplacementPolicy"]) == (1, 1, 6, "NonIndexed", False, "TerminatingOrFailed")
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid, "job-name": "j"}
    # parallelism without completions: a work queue, completions stays unset
    out = reg.create("jobs.batch", "default", {**job(parallelism=3), "metadata": {"name": "w", "namespace": "default"}})
    assert "completions" not in out["spec"] and out["spec"]["parallelism"] == 3


def test_job_restart_policy_always_is_refused(reg: Registry) -> None:
    bad = job()
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    with pytest.raises(ApiError) as ei:
        reg.create("jobs.batch", "default", bad)
    assert ei.value.code == 422 and "spec.template.spec.restartPolicy" in ei.value.message
