"""The resources this API server serves, as data: one :class:`Resource` per REST resource.

Discovery documents, URL routing, field-selector support and storage keys are all derived
from this table, so adding a resource (for a controller that needs one) is one entry here
plus, if it needs more than metadata defaulting, a strategy in :mod:`.strategies`.

Two REST resources may share one storage key: ``events.k8s.io/v1`` events are the same
objects as core ``v1`` events, stored in the core form and converted on the way in and
out (as kube-apiserver does), so ``kubectl describe`` sees what the scheduler records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
COMMON_FIELDS = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True, slots=True)
class Subresource:
    name: str
    kind: str
    group: str
    version: str
    verbs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Resource:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    fields: tuple[str, ...] = ()  # field selector labels beyond metadata.name/namespace
    storage_group: str | None = None  # storage shared with another group's resource
    verbs: tuple[str, ...] = ALL_VERBS
    singular: str = field(default="")

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage(self) -> str:
        """The store's kind key: ``core/pods``, ``apps/deployments``."""
        group = self.storage_group if self.storage_group is not None else self.group
        return f"{group or 'core'}/{self.plural}"

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def field_labels(self) -> tuple[str, ...]:
        return COMMON_FIELDS + self.fields

    def subresource(self, name: str) -> Subresource | None:
        for s in self.subresources:
            if s.name == name:
                return s
        return None

    @property
    def has_status(self) -> bool:
        return self.subresource("status") is not None


def _status(kind: str, group: str, version: str) -> Subresource:
    return Subresource("status", kind, group, version, ("get", "patch", "update"))


def _scale() -> Subresource:
    return Subresource("scale", "Scale", "autoscaling", "v1", ("get", "patch", "update"))


POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
              "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
              "status.nominatedNodeName")
EVENT_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")
EVENT_V1_FIELDS = ("regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
                   "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath",
                   "reason", "reportingController", "deprecatedSource", "type")

# what a container runtime would serve: answered by podio.py (a simulated log, or 400)
POD_IO = (Subresource("log", "Pod", "", "v1", ("get",)),
          Subresource("exec", "PodExecOptions", "", "v1", ("create", "get")),
          Subresource("attach", "PodAttachOptions", "", "v1", ("create", "get")),
          Subresource("portforward", "PodPortForwardOptions", "", "v1", ("create", "get")))

# storage: the objects the volume plugins read, and what the PV controller writes
STORAGE_RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",), (),
             (_status("PersistentVolume", "", "v1"),)),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), (),
             (_status("PersistentVolumeClaim", "", "v1"),)),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    Resource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    Resource("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    Resource("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, (), (),
             (_status("VolumeAttachment", "storage.k8s.io", "v1"),)),
)

# DRA (resource.k8s.io/v1): what DynamicResources reads and writes; batch/v1 Jobs
DRA_RESOURCES: tuple[Resource, ...] = (
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False, (), (), (),
             ("spec.nodeName", "spec.driver")),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, (), (),
             (_status("ResourceClaim", "resource.k8s.io", "v1"),)),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    Resource("batch", "v1", "jobs", "Job", True, (), ("all",), (_status("Job", "batch", "v1"),)),
)

# RBAC (rbac.authorization.k8s.io/v1): what the authorizer (:mod:`.authz`) reads
RBAC_RESOURCES: tuple[Resource, ...] = (
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
)

RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "pods", "Pod", True, ("po",), ("all",),
             (_status("Pod", "", "v1"),
              Subresource("binding", "Binding", "", "v1", ("create",)),
              Subresource("eviction", "Eviction", "policy", "v1", ("create",))) + POD_IO,
             POD_FIELDS),
    Resource("", "v1", "nodes", "Node", False, ("no",), (), (_status("Node", "", "v1"),),
             ("spec.unschedulable",)),
    Resource("", "v1", "namespaces", "Namespace", False, ("ns",), (), (_status("Namespace", "", "v1"),),
             ("status.phase",), verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    Resource("", "v1", "events", "Event", True, ("ev",), (), (), EVENT_FIELDS),
    Resource("", "v1", "services", "Service", True, ("svc",), ("all",), (_status("Service", "", "v1"),),
             ("spec.clusterIP", "spec.type")),
    Resource("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    Resource("events.k8s.io", "v1", "events", "Event", True, ("ev",), (), (), EVENT_V1_FIELDS,
             storage_group=""),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), (),
             (_status("PodDisruptionBudget", "policy", "v1"),)),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True),
    Resource("apps", "v1", "deployments", "Deployment", True, ("deploy",), ("all",),
             (_status("Deployment", "apps", "v1"), _scale())),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), ("all",),
             (_status("ReplicaSet", "apps", "v1"), _scale()), ("status.replicas",)),
    Resource("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",), ("all",),
             (_status("ReplicationController", "", "v1"),), ("status.replicas",)),
    Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True, ("pg", "pgs"), (),
             (_status("PodGroup", "scheduling.x-k8s.io", "v1alpha1"),)),
) + STORAGE_RESOURCES + (
    Resource("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), ("all",),
             (_status("StatefulSet", "apps", "v1"), _scale())),
) + DRA_RESOURCES + RBAC_RESOURCES

# secrets and service accounts (with TokenRequest), DaemonSets, CronJobs
WORKCTL_RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "secrets", "Secret", True),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), (),
             (Subresource("token", "TokenRequest", "authentication.k8s.io", "v1", ("create",)),)),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), ("all",),
             (_status("DaemonSet", "apps", "v1"),)),
    Resource("batch", "v1", "cronjobs", "CronJob", True, ("cj",), ("all",),
             (_status("CronJob", "batch", "v1"),)),
)
RESOURCES += WORKCTL_RESOURCES
# the template history of DaemonSets and StatefulSets (kubectl rollout history/undo)
RESOURCES += (Resource("apps", "v1", "controllerrevisions", "ControllerRevision", True),)

# Preferred order of API groups in discovery (kube-apiserver lists core-ish groups first).
GROUP_ORDER = ("apps", "events.k8s.io", "batch", "policy", "storage.k8s.io", "scheduling.k8s.io",
               "coordination.k8s.io", "resource.k8s.io", "scheduling.x-k8s.io")


class ResourceTable:
    """Look-ups over :data:`RESOURCES`."""

    def __init__(self, resources: tuple[Resource, ...] = RESOURCES) -> None:
        self.resources = resources
        self._by_path = {(r.group, r.version, r.plural): r for r in resources}
        self._by_name: dict[str, Resource] = {}
        for r in resources:
            # "pods", "deployments.apps", "apps/deployments": the first registration wins
            for key in (r.plural, f"{r.plural}.{r.group}" if r.group else r.plural,
                        f"{r.group}/{r.plural}" if r.group else r.plural, r.storage):
                self._by_name.setdefault(key, r)

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_path.get((group, version, plural))

    def __getitem__(self, name: str) -> Resource:
        """By name: ``pods``, ``deployments.apps``, ``apps/deployments``, ``core/pods``."""
        return self._by_name[name]

    def groups(self) -> dict[str, list[str]]:
        """API group -> versions served (core group excluded)."""
        out: dict[str, list[str]] = {}
        for g in GROUP_ORDER:
            for r in self.resources:
                if r.group == g and r.version not in out.setdefault(g, []):
                    out[g].append(r.version)
        for r in self.resources:
            if r.group and r.version not in out.setdefault(r.group, []):
                out[r.group].append(r.version)
        return out

    def in_version(self, group: str, version: str) -> list[Resource]:
        return [r for r in self.resources if r.group == group and r.version == version]

    def sharing_storage(self, storage: str) -> list[Resource]:
        return [r for r in self.resources if r.storage == storage]


TABLE = ResourceTable()
