"""storage.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "StorageClass": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta; provisioner! s; parameters {}s; reclaimPolicy s; "
        "mountOptions [atomic]s; allowVolumeExpansion b; volumeBindingMode s; "
        "allowedTopologies [atomic]@core:TopologySelectorTerm"),
    "CSINode": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @storage:CSINodeSpec",
    "CSIDriver": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @storage:CSIDriverSpec",
    "CSIStorageCapacity": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta; nodeTopology @meta:LabelSelector; storageClassName! s; "
        "capacity q; maximumVolumeSize q"),
    "VolumeAttachment": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @storage:VolumeAttachmentSpec; "
        "status @storage:VolumeAttachmentStatus"),
    "CSINodeSpec": "drivers! [map=name]@storage:CSINodeDriver",
    "CSIDriverSpec": (
        "attachRequired b; podInfoOnMount b; volumeLifecycleModes [set]s; storageCapacity b; fsGroupPolicy s; "
        "tokenRequests [atomic]@storage:TokenRequest; requiresRepublish b; seLinuxMount b; "
        "nodeAllocatableUpdatePeriodSeconds i64; preventPodSchedulingIfMissing b"),
    "VolumeAttachmentSpec": "attacher! s; source! @storage:VolumeAttachmentSource; nodeName! s",
    "VolumeAttachmentStatus": (
        "attached! b; attachmentMetadata {}s; attachError @storage:VolumeError; detachError @storage:VolumeError"),
    "CSINodeDriver": "name! s; nodeID! s; topologyKeys [atomic]s; allocatable @storage:VolumeNodeResources",
    "TokenRequest": "audience! s; expirationSeconds i64",
    "VolumeAttachmentSource": "persistentVolumeName s; inlineVolumeSpec @core:PersistentVolumeSpec",
    "VolumeError": "time t; message s; errorCode i32",
    "VolumeNodeResources": "count i32",
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
