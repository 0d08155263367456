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
        "conditions [atomic]@batch:JobCondition; startTime t; completionTime t; active i32; succeeded i32; "
        "failed i32; terminating i32; completedIndexes s; failedIndexes s; "
        "uncountedTerminatedPods @batch:UncountedTerminatedPods; ready i32"),
    "CronJobSpec": (
        "schedule! s 1; timeZone s 8p; startingDeadlineSeconds i64 2p; concurrencyPolicy s 3; suspend b 4p; "
        "jobTemplate! @batch:JobTemplateSpec 5; successfulJobsHistoryLimit i32 6p; failedJobsHistoryLimit i32 7p"),
    "CronJobStatus": "active [atomic]@core:ObjectReference; lastScheduleTime t; lastSuccessfulTime t",
    "JobCondition": "type! s; status! s; lastProbeTime t; lastTransitionTime t; reason s; message s",
    "UncountedTerminatedPods": "succeeded [set]s; failed [set]s",
    "JobTemplateSpec": "metadata @meta:ObjectMeta 1; spec @batch:JobSpec 2",
    "Job": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @batch:JobSpec 2; status @batch:JobStatus 3",
    "JobSpec": (
        "parallelism i32 1p; completions i32 2p; activeDeadlineSeconds i64 3p; podFailurePolicy any; "
        "successPolicy any; backoffLimit i32 7p; backoffLimitPerIndex i32; maxFailedIndexes i32; "
        "selector @meta:LabelSelector 4; manualSelector b 5p; template! @core:PodTemplateSpec 6; "
        "ttlSecondsAfterFinished i32 8p; completionMode s 9p; suspend b 10p; podReplacementPolicy s; managedBy s"),
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
