"""batch/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "CronJob": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @batch:CronJobSpec 2; "
        "status @batch:CronJobStatus 3"),
    "JobStatus": (
        "conditions [atomic]@batch:JobCondition 1; startTime t 2p; completionTime t 3p; active i32 4; "
        "succeeded i32 5; failed i32 6; terminating i32 11p; completedIndexes s 7; failedIndexes s 10p; "
        "uncountedTerminatedPods @batch:UncountedTerminatedPods 8p; ready i32 9p"),
    "CronJobSpec": (
        "schedule! s 1; timeZone s 8p; startingDeadlineSeconds i64 2p; concurrencyPolicy s<ConcurrencyPolicy> 3; "
        "suspend b 4p; jobTemplate! @batch:JobTemplateSpec 5; successfulJobsHistoryLimit i32 6p; "
        "failedJobsHistoryLimit i32 7p"),
    "CronJobStatus": "active [atomic]@core:ObjectReference 1; lastScheduleTime t 4p; lastSuccessfulTime t 5p",
    "JobCondition": (
        "type! s<JobConditionType> 1; status! s<ConditionStatus> 2; lastProbeTime t 3; lastTransitionTime t 4; "
        "reason s 5; message s 6"),
    "UncountedTerminatedPods": "succeeded [set]s<types.UID> 1; failed [set]s<types.UID> 2",
    "JobTemplateSpec": "metadata @meta:ObjectMeta 1; spec @batch:JobSpec 2",
    "Job": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @batch:JobSpec 2; status @batch:JobStatus 3",
    "JobSpec": (
        "parallelism i32 1p; completions i32 2p; activeDeadlineSeconds i64 3p; "
        "podFailurePolicy @batch:PodFailurePolicy 11p; successPolicy @batch:SuccessPolicy 16p; backoffLimit i32 7p; "
        "backoffLimitPerIndex i32 12p; maxFailedIndexes i32 13p; selector @meta:LabelSelector 4p; "
        "manualSelector b 5p; template! @core:PodTemplateSpec 6; ttlSecondsAfterFinished i32 8p; "
        "completionMode s<CompletionMode> 9p; suspend b 10p; podReplacementPolicy s<PodReplacementPolicy> 14p; "
        "managedBy s 15p"),
    "PodFailurePolicy": "rules! [atomic]@batch:PodFailurePolicyRule 1",
    "PodFailurePolicyRule": (
        "action! s<PodFailurePolicyAction> 1; onExitCodes @batch:PodFailurePolicyOnExitCodesRequirement 2p; "
        "onPodConditions [atomic]@batch:PodFailurePolicyOnPodConditionsPattern 3"),
    "PodFailurePolicyOnExitCodesRequirement": (
        "containerName s 1p; operator! s<PodFailurePolicyOnExitCodesOperator> 2; values! [set]i32 3"),
    "PodFailurePolicyOnPodConditionsPattern": "type! s<PodConditionType> 1; status! s<ConditionStatus> 2",
    "SuccessPolicy": "rules! [atomic]@batch:SuccessPolicyRule 1",
    "SuccessPolicyRule": "succeededIndexes s 1p; succeededCount i32 2p",
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
