"""What ``kubesched serve --kubernetes-version X`` serves, asked with the real kubectl: the
group versions kube-apiserver X serves by default, for the groups serve implements.

Expected lists, from upstream: ``pkg/controlplane/instance.go`` ``DefaultAPIResourceConfigSource``
turns stable versions on and alpha and beta versions off (KEP-3136: betas added since 1.24
are off by default), and ``test/integration/etcd/data.go`` (v1.36) gives each version's
``IntroducedVersion``/``RemovedVersion``: resource.k8s.io v1 from 1.34, v1beta1 1.32-1.37,
v1beta2 1.33-1.38, v1alpha3 (DeviceTaintRule) 1.33-1.38; scheduling.k8s.io v1alpha2
(Workload, PodGroup) from 1.36; coordination.k8s.io v1beta1 (LeaseCandidate) 1.33-1.38;
storage.k8s.io v1beta1 (VolumeAttributesClass) 1.31-1.36. Every one of those alphas and
betas exists in some of 1.34-1.37 and is off by default in all, so each release serves the
same v1 list and answers the others 404, as kube-apiserver does for a version it does not
serve. ``scheduling.x-k8s.io/v1alpha1`` is scheduler-plugins' PodGroup CRD, installed by serve."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from serve_harness import API_ONLY, Server

pytestmark = pytest.mark.slow

EXPECTED_API_VERSIONS = [
    "apps/v1", "batch/v1", "coordination.k8s.io/v1", "events.k8s.io/v1", "policy/v1",
    "rbac.authorization.k8s.io/v1", "resource.k8s.io/v1", "scheduling.k8s.io/v1",
    "scheduling.x-k8s.io/v1alpha1", "storage.k8s.io/v1", "v1"]
EXPECTED_RESOURCE_KINDS = ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"]
# group versions that exist in the release but are off by default (alpha or beta)
NOT_SERVED = {
    "1.34": ["resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3",
             "coordination.k8s.io/v1beta1", "storage.k8s.io/v1beta1"],
    "1.35": ["resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3",
             "scheduling.k8s.io/v1alpha1", "coordination.k8s.io/v1beta1", "storage.k8s.io/v1beta1"],
    "1.36": ["resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3",
             "scheduling.k8s.io/v1alpha2", "coordination.k8s.io/v1beta1", "storage.k8s.io/v1beta1"],
    "1.37": ["resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3",
             "scheduling.k8s.io/v1alpha2", "coordination.k8s.io/v1beta1"],
}


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.36", "1.37"])
def test_served_group_versions_are_the_releases(spawn: Callable[..., Server], release: str) -> None:
    server = spawn(*API_ONLY, "--nodes", "0", "--kubernetes-version", release)
    assert server.kubectl("version", "-o", "json").stdout.count(f'"minor": "{release.split(".")[1]}"') == 1
    assert server.kubectl("api-versions").stdout.split() == EXPECTED_API_VERSIONS
    rows = [line.split() for line in server.kubectl(
        "api-resources", "--api-group", "resource.k8s.io", "--no-headers").stdout.splitlines()]
    # NAME [SHORTNAMES] APIVERSION NAMESPACED KIND
    assert sorted((r[-3], r[-1]) for r in rows) == [("resource.k8s.io/v1", k) for k in EXPECTED_RESOURCE_KINDS]
    for gv in NOT_SERVED[release]:
        group, version = gv.split("/")
        status, body = server.request("GET", f"/apis/{gv}")
        assert (status, body.get("reason")) == (404, "NotFound"), (gv, status, body)
        status, body = server.request("GET", f"/apis/{gv}/deviceclasses")
        assert status == 404, (gv, status, body)
        status, body = server.request("GET", f"/openapi/v3/apis/{gv}")
        assert status == 404, (gv, status, body)
        status, group_doc = server.request("GET", f"/apis/{group}")
        assert status == 200 and gv not in [v["groupVersion"] for v in group_doc["versions"]], group_doc
    status, root = server.request("GET", "/openapi/v3")
    assert status == 200
    assert "apis/resource.k8s.io/v1" in root["paths"]
    assert not [p for p in root["paths"] if any(p == f"apis/{gv}" for gv in NOT_SERVED[release])]
