"""The API group versions kube-apiserver serves by default in each Kubernetes release, for
the groups this server implements, so ``serve --kubernetes-version`` answers discovery,
OpenAPI and requests as that release's API server does.

kube-apiserver decides what it serves in ``pkg/controlplane/instance.go``
(``DefaultAPIResourceConfigSource``): stable versions are on, and every beta version added
since 1.24 and every alpha version is off unless ``--runtime-config`` turns it on (KEP-3136,
"beta APIs off by default"). Which versions exist in a release is what upstream's
``test/integration/etcd/data.go`` records for each resource: ``IntroducedVersion`` and
``RemovedVersion``. :data:`VERSIONS` transcribes both for the groups this server has; a
version a release does not serve is a 404, as there.

In 1.34 to 1.37 every version on by default here is a v1, the same in all four releases;
the alpha and beta versions below (DRA's v1beta1/v1beta2 and DeviceTaintRule's
v1alpha3/v1beta2, the Workload and PodGroup alphas of scheduling.k8s.io, LeaseCandidate) are
off by default in each, so they are not served.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.kubeversion import minor_number
from kubesched.server.apiserver.registry.resources import RESOURCES, Resource, ResourceTable

# groups that are not kube-apiserver's own: CRDs this server installs as if applied
CRD_GROUPS = frozenset({"scheduling.x-k8s.io"})


@dataclass(frozen=True, slots=True)
class GroupVersion:
    group: str  # "" for the core group
    version: str
    introduced: str  # first release that has it ("1.34")
    removed: str | None = None  # first release without it

    @property
    def stable(self) -> bool:
        return "alpha" not in self.version and "beta" not in self.version

    def exists_in(self, release: str) -> bool:
        n = minor_number(release)
        return minor_number(self.introduced) <= n and (self.removed is None or n < minor_number(self.removed))

    def on_by_default(self, release: str) -> bool:
        """``DefaultAPIResourceConfigSource``: stable versions on, alpha and beta off."""
        return self.stable and self.exists_in(release)


# IntroducedVersion / RemovedVersion of the group's resources in upstream's
# test/integration/etcd/data.go (v1.36); a version's range is the widest of its resources'.
VERSIONS: tuple[GroupVersion, ...] = (
    GroupVersion("", "v1", "1.0"),
    GroupVersion("apps", "v1", "1.9"),
    GroupVersion("batch", "v1", "1.2"),
    GroupVersion("coordination.k8s.io", "v1", "1.14"),
    GroupVersion("coordination.k8s.io", "v1beta1", "1.33", "1.39"),  # leasecandidates
    GroupVersion("coordination.k8s.io", "v1alpha2", "1.32", "1.38"),  # leasecandidates
    GroupVersion("events.k8s.io", "v1", "1.19"),
    GroupVersion("policy", "v1", "1.21"),
    GroupVersion("rbac.authorization.k8s.io", "v1", "1.8"),
    GroupVersion("resource.k8s.io", "v1", "1.34"),
    GroupVersion("resource.k8s.io", "v1beta2", "1.33", "1.39"),  # + devicetaintrules from 1.36
    GroupVersion("resource.k8s.io", "v1beta1", "1.32", "1.38"),
    GroupVersion("resource.k8s.io", "v1alpha3", "1.33", "1.39"),  # devicetaintrules
    GroupVersion("scheduling.k8s.io", "v1", "1.14"),
    # Workload (gang scheduling) in 1.35; v1.36's data.go has only v1alpha2
    GroupVersion("scheduling.k8s.io", "v1alpha1", "1.35", "1.36"),
    GroupVersion("scheduling.k8s.io", "v1alpha2", "1.36", "1.42"),  # workloads, podgroups
    GroupVersion("storage.k8s.io", "v1", "1.6"),
    GroupVersion("storage.k8s.io", "v1beta1", "1.31", "1.37"),  # volumeattributesclasses
)
_BY_KEY = {(v.group, v.version): v for v in VERSIONS}


def served_by_default(release: str) -> list[tuple[str, str]]:
    """(group, version) pairs kube-apiserver of ``release`` ("1.35") serves by default."""
    return [(v.group, v.version) for v in VERSIONS if v.on_by_default(release)]


def serves(resource: Resource, release: str) -> bool:
    """Whether kube-apiserver of ``release`` serves this resource's group version by default
    (a CRD's group: always). A group version missing from :data:`VERSIONS` is an error, so a
    new resource cannot be served without its row."""
    if resource.group in CRD_GROUPS:
        return True
    gv = _BY_KEY.get((resource.group, resource.version))
    if gv is None:
        raise LookupError(f"{resource.api_version} is not in the served-versions table (served.py)")
    return gv.on_by_default(release)


def table_for(release: str) -> ResourceTable:
    """The resources this server serves as kube-apiserver of ``release`` would."""
    return ResourceTable(tuple(r for r in RESOURCES if serves(r, release)))
