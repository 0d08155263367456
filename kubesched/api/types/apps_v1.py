"""apps/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "StatefulSet": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @apps:StatefulSetSpec 2; "
        "status @apps:StatefulSetStatus 3"),
    "DaemonSet": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @apps:DaemonSetSpec 2; "
        "status @apps:DaemonSetStatus 3"),
    "ControllerRevision": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; data any 2; revision! i64 3",
    "DeploymentStatus": (
        "observedGeneration i64 1; replicas i32 2; updatedReplicas i32 3; readyReplicas i32 7; "
        "availableReplicas i32 4; unavailableReplicas i32 5; terminatingReplicas i32 9p; "
        "conditions [map=type]@apps:DeploymentCondition 6; collisionCount i32 8p"),
    "ReplicaSetStatus": (
        "replicas! i32 1; fullyLabeledReplicas i32 2; readyReplicas i32 4; availableReplicas i32 5; "
        "terminatingReplicas i32 7p; observedGeneration i64 3; conditions [map=type]@apps:ReplicaSetCondition 6"),
    "StatefulSetSpec": (
        "replicas i32 1p; selector @meta:LabelSelector 2p; template! @core:PodTemplateSpec 3; "
        "volumeClaimTemplates [atomic]@core:PersistentVolumeClaim 4; serviceName s 5; "
        "podManagementPolicy s<PodManagementPolicyType> 6; updateStrategy @apps:StatefulSetUpdateStrategy 7; "
        "revisionHistoryLimit i32 8p; minReadySeconds i32 9; "
        "persistentVolumeClaimRetentionPolicy @apps:StatefulSetPersistentVolumeClaimRetentionPolicy 10p; "
        "ordinals @apps:StatefulSetOrdinals 11p"),
    "StatefulSetStatus": (
        "observedGeneration i64 1; replicas! i32 2; readyReplicas i32 3; currentReplicas i32 4; "
        "updatedReplicas i32 5; currentRevision s 6; updateRevision s 7; collisionCount i32 9p; "
        "conditions [map=type]@apps:StatefulSetCondition 10; availableReplicas i32 11"),
    "DaemonSetSpec": (
        "selector @meta:LabelSelector 1p; template! @core:PodTemplateSpec 2; "
        "updateStrategy @apps:DaemonSetUpdateStrategy 3; minReadySeconds i32 4; revisionHistoryLimit i32 6p"),
    "DaemonSetStatus": (
        "currentNumberScheduled! i32 1; numberMisscheduled! i32 2; desiredNumberScheduled! i32 3; "
        "numberReady! i32 4; observedGeneration i64 5; updatedNumberScheduled i32 6; numberAvailable i32 7; "
        "numberUnavailable i32 8; collisionCount i32 9p; conditions [map=type]@apps:DaemonSetCondition 10"),
    "DeploymentCondition": (
        "type! s<DeploymentConditionType> 1; status! s<ConditionStatus> 2; lastUpdateTime t 6; "
        "lastTransitionTime t 7; reason s 4; message s 5"),
    "ReplicaSetCondition": (
        "type! s<ReplicaSetConditionType> 1; status! s<ConditionStatus> 2; lastTransitionTime t 3; reason s 4; "
        "message s 5"),
    "StatefulSetUpdateStrategy": (
        "type s<StatefulSetUpdateStrategyType> 1; rollingUpdate @apps:RollingUpdateStatefulSetStrategy 2p"),
    "StatefulSetPersistentVolumeClaimRetentionPolicy": (
        "whenDeleted s<PersistentVolumeClaimRetentionPolicyType> 1; "
        "whenScaled s<PersistentVolumeClaimRetentionPolicyType> 2"),
    "StatefulSetOrdinals": "start i32 1",
    "StatefulSetCondition": (
        "type! s<StatefulSetConditionType> 1; status! s<ConditionStatus> 2; lastTransitionTime t 3; reason s 4; "
        "message s 5"),
    "DaemonSetUpdateStrategy": "type s<DaemonSetUpdateStrategyType> 1; rollingUpdate @apps:RollingUpdateDaemonSet 2p",
    "DaemonSetCondition": (
        "type! s<DaemonSetConditionType> 1; status! s<ConditionStatus> 2; lastTransitionTime t 3; reason s 4; "
        "message s 5"),
    "RollingUpdateStatefulSetStrategy": "partition i32 1p; maxUnavailable x 2p",
    "RollingUpdateDaemonSet": "maxUnavailable x 1p; maxSurge x 2p",
    "Deployment": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @apps:DeploymentSpec 2; "
        "status @apps:DeploymentStatus 3"),
    "DeploymentSpec": (
        "replicas i32 1p; selector! @meta:LabelSelector 2p; template! @core:PodTemplateSpec 3; "
        "strategy @apps:DeploymentStrategy 4; minReadySeconds i32 5; revisionHistoryLimit i32 6p; paused b 7; "
        "progressDeadlineSeconds i32 9p"),
    "DeploymentStrategy": "type s<DeploymentStrategyType> 1; rollingUpdate @apps:RollingUpdateDeployment 2p",
    "RollingUpdateDeployment": "maxUnavailable x 1p; maxSurge x 2p",
    "ReplicaSet": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @apps:ReplicaSetSpec 2; "
        "status @apps:ReplicaSetStatus 3"),
    "ReplicaSetSpec": (
        "replicas i32 1p; minReadySeconds i32 4; selector! @meta:LabelSelector 2p; template @core:PodTemplateSpec 3"),
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
