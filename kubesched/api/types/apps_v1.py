"""apps/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "StatefulSet": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta; spec @apps:StatefulSetSpec; "
        "status @apps:StatefulSetStatus"),
    "DaemonSet": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @apps:DaemonSetSpec 2; "
        "status @apps:DaemonSetStatus 3"),
    "ControllerRevision": "apiVersion s; kind s; metadata @meta:ObjectMeta; data any; revision! i64",
    "DeploymentStatus": (
        "observedGeneration i64; replicas i32; updatedReplicas i32; readyReplicas i32; availableReplicas i32; "
        "unavailableReplicas i32; terminatingReplicas i32; conditions [map=type]@apps:DeploymentCondition; "
        "collisionCount i32"),
    "ReplicaSetStatus": (
        "replicas! i32; fullyLabeledReplicas i32; readyReplicas i32; availableReplicas i32; terminatingReplicas i32; "
        "observedGeneration i64; conditions [map=type]@apps:ReplicaSetCondition"),
    "StatefulSetSpec": (
        "replicas i32; selector @meta:LabelSelector; template! @core:PodTemplateSpec; "
        "volumeClaimTemplates [atomic]@core:PersistentVolumeClaim; serviceName s; podManagementPolicy s; "
        "updateStrategy @apps:StatefulSetUpdateStrategy; revisionHistoryLimit i32; minReadySeconds i32; "
        "persistentVolumeClaimRetentionPolicy @apps:StatefulSetPersistentVolumeClaimRetentionPolicy; "
        "ordinals @apps:StatefulSetOrdinals"),
    "StatefulSetStatus": (
        "observedGeneration i64; replicas! i32; readyReplicas i32; currentReplicas i32; updatedReplicas i32; "
        "currentRevision s; updateRevision s; collisionCount i32; conditions [map=type]@apps:StatefulSetCondition; "
        "availableReplicas i32"),
    "DaemonSetSpec": (
        "selector @meta:LabelSelector 1; template! @core:PodTemplateSpec 2; "
        "updateStrategy @apps:DaemonSetUpdateStrategy 3; minReadySeconds i32 4; revisionHistoryLimit i32 6p"),
    "DaemonSetStatus": (
        "currentNumberScheduled! i32; numberMisscheduled! i32; desiredNumberScheduled! i32; numberReady! i32; "
        "observedGeneration i64; updatedNumberScheduled i32; numberAvailable i32; numberUnavailable i32; "
        "collisionCount i32; conditions [map=type]@apps:DaemonSetCondition"),
    "DeploymentCondition": (
        "type! s; status! s<ConditionStatus>; lastUpdateTime t; lastTransitionTime t; reason s; message s"),
    "ReplicaSetCondition": "type! s; status! s<ConditionStatus>; lastTransitionTime t; reason s; message s",
    "StatefulSetUpdateStrategy": "type s; rollingUpdate @apps:RollingUpdateStatefulSetStrategy",
    "StatefulSetPersistentVolumeClaimRetentionPolicy": "whenDeleted s; whenScaled s",
    "StatefulSetOrdinals": "start i32",
    "StatefulSetCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "DaemonSetUpdateStrategy": "type s 1; rollingUpdate @apps:RollingUpdateDaemonSet 2",
    "DaemonSetCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "RollingUpdateStatefulSetStrategy": "partition i32; maxUnavailable x",
    "RollingUpdateDaemonSet": "maxUnavailable x 1p; maxSurge x 2p",
    "Deployment": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @apps:DeploymentSpec 2; "
        "status @apps:DeploymentStatus 3"),
    "DeploymentSpec": (
        "replicas i32 1p; selector! @meta:LabelSelector 2; template! @core:PodTemplateSpec 3; "
        "strategy @apps:DeploymentStrategy 4; minReadySeconds i32 5; revisionHistoryLimit i32 6p; paused b 7; "
        "progressDeadlineSeconds i32 9p"),
    "DeploymentStrategy": "type s<DeploymentStrategyType> 1; rollingUpdate @apps:RollingUpdateDeployment 2",
    "RollingUpdateDeployment": "maxUnavailable x 1p; maxSurge x 2p",
    "ReplicaSet": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @apps:ReplicaSetSpec 2; "
        "status @apps:ReplicaSetStatus 3"),
    "ReplicaSetSpec": (
        "replicas i32 1p; minReadySeconds i32 4; selector! @meta:LabelSelector 2; template @core:PodTemplateSpec 3"),
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
