"""Cluster events that can make an unschedulable pod schedulable (upstream ``fwk.ClusterEvent``).

Plugins register the events they care about (``EnqueueExtensions``), optionally with a
QueueingHint function that looks at the old and new object and says Queue or QueueSkip.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntFlag
from typing import Any


class Resource(str, Enum):
    Pod = "Pod"
    AssignedPod = "AssignedPod"
    UnscheduledPod = "UnscheduledPod"
    Node = "Node"
    Namespace = "Namespace"
    PodGroup = "PodGroup"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    PersistentVolume = "PersistentVolume"
    StorageClass = "storage.k8s.io/StorageClass"
    CSINode = "storage.k8s.io/CSINode"
    CSIDriver = "storage.k8s.io/CSIDriver"
    CSIStorageCapacity = "storage.k8s.io/CSIStorageCapacity"
    VolumeAttachment = "storage.k8s.io/VolumeAttachment"
    ResourceClaim = "ResourceClaim"
    ResourceSlice = "ResourceSlice"
    DeviceClass = "DeviceClass"
    WildCard = "*"


class ActionType(IntFlag):
    Add = 1
    Delete = 2
    UpdateNodeAllocatable = 4
    UpdateNodeLabel = 8
    UpdateNodeTaint = 16
    UpdateNodeCondition = 32
    UpdateNodeAnnotation = 64
    UpdatePodLabel = 128
    UpdatePodScaleDown = 256
    UpdatePodToleration = 512
    UpdatePodSchedulingGatesEliminated = 1024
    UpdatePodGeneratedResourceClaim = 2048
    UpdateNodeDeclaredFeature = 4096  # status.declaredFeatures changed
    Update = (UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition
              | UpdateNodeAnnotation | UpdatePodLabel | UpdatePodScaleDown | UpdatePodToleration
              | UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim | UpdateNodeDeclaredFeature)
    All = Add | Delete | Update


class QueueingHint(Enum):
    QueueSkip = 0
    Queue = 1


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: Resource
    action: ActionType
    label: str = ""


QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]  # (pod, old_obj, new_obj) -> hint


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None
