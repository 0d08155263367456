"""storage.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "StorageClass": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; provisioner! s 2; parameters {}s 3; "
        "reclaimPolicy s<PersistentVolumeReclaimPolicy> 4p; mountOptions [atomic]s 5; allowVolumeExpansion b 6p; "
        "volumeBindingMode s<VolumeBindingMode> 7p; allowedTopologies [atomic]@core:TopologySelectorTerm 8"),
    "CSINode": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec! @storage:CSINodeSpec 2",
    "CSIDriver": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec! @storage:CSIDriverSpec 2",
    "CSIStorageCapacity": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; nodeTopology @meta:LabelSelector 2p; "
        "storageClassName! s 3; capacity q 4p; maximumVolumeSize q 5p"),
    "VolumeAttachment": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec! @storage:VolumeAttachmentSpec 2; "
        "status @storage:VolumeAttachmentStatus 3"),
    "CSINodeSpec": "drivers! [map=name]@storage:CSINodeDriver 1",
    "CSIDriverSpec": (
        "attachRequired b 1p; podInfoOnMount b 2p; volumeLifecycleModes [set]s<VolumeLifecycleMode> 3; "
        "storageCapacity b 4p; fsGroupPolicy s<FSGroupPolicy> 5p; tokenRequests [atomic]@storage:TokenRequest 6; "
        "requiresRepublish b 7p; seLinuxMount b 8p; nodeAllocatableUpdatePeriodSeconds i64 9p; "
        "preventPodSchedulingIfMissing b 11p"),
    "VolumeAttachmentSpec": "attacher! s 1; source! @storage:VolumeAttachmentSource 2; nodeName! s 3",
    "VolumeAttachmentStatus": (
        "attached! b 1; attachmentMetadata {}s 2; attachError @storage:VolumeError 3p; "
        "detachError @storage:VolumeError 4p"),
    "CSINodeDriver": "name! s 1; nodeID! s 2; topologyKeys [atomic]s 3; allocatable @storage:VolumeNodeResources 4p",
    "TokenRequest": "audience! s 1; expirationSeconds i64 2p",
    "VolumeAttachmentSource": "persistentVolumeName s 1p; inlineVolumeSpec @core:PersistentVolumeSpec 2p",
    "VolumeError": "time t 1; message s 2; errorCode i32 3p",
    "VolumeNodeResources": "count i32 1p",
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
