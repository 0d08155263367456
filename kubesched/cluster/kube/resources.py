"""The API resources the scheduler reads, as data: where they are served and how each
object is decoded into a :mod:`kubesched.api` object.

Objects come from an API server, which validated them: they are decoded without
validating them again. Pods are listed and watched without terminal ones (``status.phase`` neither Succeeded
nor Failed), as upstream's scheduler does: a pod that finishes leaves the informer as a
delete, and its resources leave the node.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.devicetaints import DeviceTaintRule
from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.podgroup import PodGroup
from kubesched.api.storage import (
    CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass,
    VolumeAttachment,
)
from kubesched.api.workloads import Workload

_arrival = itertools.count()


def decode_pod(raw: dict[str, Any]) -> Pod:
    pod = Pod.from_dict(raw, validate=False)
    pod.seq = next(_arrival)  # arrival order breaks exact queue-timestamp ties, as in simulate
    return pod


# The metadata a pod's spec-derived fields also read (Pod.from_dict: the labels feed the
# affinity and spread terms, the name the volumes); the rest of the metadata is not decoded.
_POD_META_KEYS = ("name", "namespace", "uid", "labels", "annotations", "ownerReferences")
_ABSENT = object()


def redecode_pod(prev: Pod, raw: dict[str, Any]) -> Pod:
    """A new version of ``prev``: when its spec (but ``nodeName``) and the metadata the
    decode reads are equal to ``prev``'s, only what a bind or a status write changes is
    read again (node, nominated node, start time, phase, deletion timestamp) and the rest
    is ``prev``'s, which decoding the same input would rebuild equal. Each of a pod's
    watch events after its ADDED (its bind, the kubelet's status writes) is decoded so."""
    old = prev.raw
    meta, spec, status = raw.get("metadata"), raw.get("spec"), raw.get("status") or {}
    ometa, ospec = old.get("metadata"), old.get("spec")
    if not (type(meta) is dict and type(spec) is dict and type(ometa) is dict and type(ospec) is dict
            and isinstance(status, dict)):
        return decode_pod(raw)
    for k in _POD_META_KEYS:
        if meta.get(k) != ometa.get(k):
            return decode_pod(raw)
    node = spec.get("nodeName")
    if spec != ospec:
        if node == ospec.get("nodeName") or len(spec) != len(ospec) + ("nodeName" not in ospec) \
                or any(v != ospec.get(k, _ABSENT) for k, v in spec.items() if k != "nodeName"):
            return decode_pod(raw)
    pod = prev.evolve(raw=raw, node_name=str(node or ""),
                      nominated_node_name=str(status.get("nominatedNodeName") or ""),
                      start_time=str(status.get("startTime") or ""),
                      deletion_timestamp=meta.get("deletionTimestamp"),
                      phase=str(status.get("phase") or "Pending"), extra={})
    pod.seq = next(_arrival)
    return pod


def _trusted(cls: Any) -> Callable[[dict[str, Any]], Any]:
    """Decode without re-running the API server's validation: the server did it, and one
    that is newer than ours may accept what we would not."""
    return lambda raw: cls.from_dict(raw, validate=False)


def _workload(kind: str) -> Callable[[dict[str, Any]], Workload]:
    """A list's items come without kind: set it, then decode as :class:`Workload`."""
    return lambda raw: Workload.from_dict(raw if raw.get("kind") == kind else {**raw, "kind": kind})


@dataclass(frozen=True, slots=True)
class ApiResource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    decode: Callable[[dict[str, Any]], Any]
    field_selector: str = ""
    optional: bool = False  # a server without it (404) is an empty informer, not an error
    # decode a new version of a known object from its previous decoded one (cheaper);
    # None: ``decode`` alone
    redecode: Callable[[Any, dict[str, Any]], Any] | None = None

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def path(self) -> str:
        """The collection across namespaces."""
        return f"{self.prefix}/{self.plural}"

    def object_path(self, namespace: str, name: str, subresource: str = "") -> str:
        base = f"{self.prefix}/namespaces/{namespace}/{self.plural}" if self.namespaced else self.path
        return f"{base}/{name}" + (f"/{subresource}" if subresource else "")


NODES = ApiResource("", "v1", "nodes", "Node", False, _trusted(Node))
PODS = ApiResource("", "v1", "pods", "Pod", True, decode_pod,
                   field_selector="status.phase!=Succeeded,status.phase!=Failed", redecode=redecode_pod)
NAMESPACES = ApiResource("", "v1", "namespaces", "Namespace", False, _trusted(Namespace))
PRIORITY_CLASSES = ApiResource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False,
                               _trusted(PriorityClass))
PDBS = ApiResource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True,
                   _trusted(PodDisruptionBudget))
POD_GROUPS = ApiResource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True,
                         _trusted(PodGroup), optional=True)
# Read by PodTopologySpread's default constraints (upstream's informer listers).
SERVICES = ApiResource("", "v1", "services", "Service", True, _workload("Service"))
REPLICATION_CONTROLLERS = ApiResource("", "v1", "replicationcontrollers", "ReplicationController", True,
                                      _workload("ReplicationController"))
REPLICA_SETS = ApiResource("apps", "v1", "replicasets", "ReplicaSet", True, _workload("ReplicaSet"))
STATEFUL_SETS = ApiResource("apps", "v1", "statefulsets", "StatefulSet", True, _workload("StatefulSet"))
WORKLOAD_RESOURCES = (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)
# The other owners of pods (and of ReplicaSets and Jobs): the scheduler never reads them, but a
# snapshot or a recording keeps them, so that a cluster rebuilt from it (``serve --from``)
# has the owners its pods refer to and its garbage collector leaves those pods alone.
DEPLOYMENTS = ApiResource("apps", "v1", "deployments", "Deployment", True, _workload("Deployment"))
DAEMON_SETS = ApiResource("apps", "v1", "daemonsets", "DaemonSet", True, dict)
CRON_JOBS = ApiResource("batch", "v1", "cronjobs", "CronJob", True, dict)
JOBS = ApiResource("batch", "v1", "jobs", "Job", True, _workload("Job"))
OWNER_RESOURCES = (DEPLOYMENTS, DAEMON_SETS, CRON_JOBS, JOBS)
EVENTS = ApiResource("events.k8s.io", "v1", "events", "Event", True, dict)
# what the volume plugins read (VolumeBinding, VolumeZone, NodeVolumeLimits, VolumeRestrictions)
PVS = ApiResource("", "v1", "persistentvolumes", "PersistentVolume", False, _trusted(PersistentVolume))
PVCS = ApiResource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True,
                   _trusted(PersistentVolumeClaim))
STORAGE_CLASSES = ApiResource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False,
                              _trusted(StorageClass))
CSI_NODES = ApiResource("storage.k8s.io", "v1", "csinodes", "CSINode", False, _trusted(CSINode))
CSI_DRIVERS = ApiResource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, _trusted(CSIDriver))
CSI_STORAGE_CAPACITIES = ApiResource("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True,
                                     _trusted(CSIStorageCapacity))
VOLUME_ATTACHMENTS = ApiResource("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False,
                                 _trusted(VolumeAttachment))

# what DynamicResources reads (and, for claims, writes at PreBind); the DRA objects are parsed
# as the scheduler needs them (one that does not parse is skipped by its informer). Optional:
# a cluster that does not serve resource.k8s.io/v1 (DRA off, before 1.34) has none of them.
DEVICE_CLASSES = ApiResource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, DeviceClass.from_dict,
                             optional=True)
RESOURCE_SLICES = ApiResource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False,
                              ResourceSlice.from_dict, optional=True)
RESOURCE_CLAIMS = ApiResource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True,
                              ResourceClaim.from_dict, optional=True)
RESOURCE_CLAIM_TEMPLATES = ApiResource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate",
                                       True, ResourceClaimTemplate.from_dict, optional=True)

DRA_RESOURCES = (DEVICE_CLASSES, RESOURCE_SLICES, RESOURCE_CLAIMS, RESOURCE_CLAIM_TEMPLATES)
# DeviceTaintRules, in each version a release may serve them in (v1alpha3 up to 1.35,
# v1beta2 from 1.36, v1 from 1.37); a server serving several lists the same rules in each.
# Not in SCHEDULER_RESOURCES: a snapshot would hold each rule once per served version.
DEVICE_TAINT_RULES = tuple(ApiResource("resource.k8s.io", v, "devicetaintrules", "DeviceTaintRule", False,
                                       DeviceTaintRule.from_dict, optional=True) for v in ("v1alpha3", "v1beta2", "v1"))
STORAGE_RESOURCES = (PVS, PVCS, STORAGE_CLASSES, CSI_NODES, CSI_DRIVERS, CSI_STORAGE_CAPACITIES, VOLUME_ATTACHMENTS)
SCHEDULER_RESOURCES = ((NODES, PODS, NAMESPACES, PRIORITY_CLASSES, PDBS, POD_GROUPS) + STORAGE_RESOURCES
                       + WORKLOAD_RESOURCES + DRA_RESOURCES)
