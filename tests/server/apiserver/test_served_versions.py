"""The served-versions table per release (``registry/served.py``), against upstream's
``test/integration/etcd/data.go`` (v1.36: IntroducedVersion/RemovedVersion of each resource)
and ``pkg/controlplane/instance.go`` ``DefaultAPIResourceConfigSource`` (stable on, alpha
and beta off by default)."""

from __future__ import annotations

import pytest

from kubesched.api.kubeversion import SUPPORTED
from kubesched.server.apiserver.registry.resources import RESOURCES
from kubesched.server.apiserver.registry.served import VERSIONS, served_by_default, serves, table_for


@pytest.mark.parametrize("group_version, releases", [
    # data.go: resource.k8s.io v1beta1 1.32..1.38, v1beta2 1.33..1.39, v1 from 1.34
    ("resource.k8s.io/v1beta1", ["1.34", "1.35", "1.36", "1.37"]),
    ("resource.k8s.io/v1beta2", ["1.34", "1.35", "1.36", "1.37"]),
    ("resource.k8s.io/v1", ["1.34", "1.35", "1.36", "1.37"]),
    # scheduling.k8s.io v1alpha2 (workloads, podgroups) 1.36..1.42; v1alpha1 only in 1.35
    ("scheduling.k8s.io/v1alpha1", ["1.35"]),
    ("scheduling.k8s.io/v1alpha2", ["1.36", "1.37"]),
    # storage.k8s.io v1beta1 (volumeattributesclasses) 1.31..1.37
    ("storage.k8s.io/v1beta1", ["1.34", "1.35", "1.36"]),
])
def test_which_releases_have_a_version(group_version: str, releases: list[str]) -> None:
    gv = next(v for v in VERSIONS if f"{v.group}/{v.version}" == group_version)
    assert [r for r in SUPPORTED if gv.exists_in(r)] == releases


@pytest.mark.parametrize("release", SUPPORTED)
def test_only_stable_versions_are_served_by_default(release: str) -> None:
    served = served_by_default(release)
    assert all("alpha" not in v and "beta" not in v for _, v in served)
    assert ("resource.k8s.io", "v1") in served and ("resource.k8s.io", "v1beta2") not in served
    assert ("scheduling.k8s.io", "v1alpha1") not in served and ("scheduling.k8s.io", "v1alpha2") not in served


def test_every_served_resource_has_a_row() -> None:
    """A resource whose group version the table lacks is refused, never served by accident."""
    for release in SUPPORTED:
        assert len(table_for(release).resources) == len(RESOURCES)
    fake = RESOURCES[0].__class__("resource.k8s.io", "v1beta2", "deviceclasses", "DeviceClass", False)
    assert not serves(fake, "1.37")
    missing = RESOURCES[0].__class__("example.com", "v1", "things", "Thing", True)
    with pytest.raises(LookupError, match="example.com/v1 is not in the served-versions table"):
        serves(missing, "1.35")
