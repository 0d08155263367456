"""Secrets, ServiceAccounts and batch/v1 Jobs described field by field, so ``kubectl explain``
shows their real fields (not a free-form spec a Secret does not have) and ``fieldValidation``
flags unknown ones. Field names, types, required fields and list semantics are upstream's
(``core/v1`` and ``batch/v1`` types); descriptions are ours. CronJobs, DaemonSets,
StatefulSets and the other kinds come from the compact tables (:mod:`.compact`)."""

from __future__ import annotations

from kubesched.server.apiserver.typedefs.dsl import (
    Opts, ANY, BOOL, INT32, INT64, STRING, STRING_MAP, T, atomic, define, listmap, ref,
)
from kubesched.server.apiserver.typedefs.meta import LABEL_SELECTOR, OBJECT_META
from kubesched.server.apiserver.typedefs.pod import CORE, POD_TEMPLATE_SPEC

BATCH = "io.k8s.api.batch.v1."


def _top(desc: str) -> dict[str, T]:
    return {"apiVersion": STRING("Versioned schema of this object."), "kind": STRING("Kind of this object."),
            "metadata": OBJECT_META(desc)}


define(CORE + "Secret", "Confidential data as key/value pairs.", Opts(gvk=("", "v1", "Secret")),
       **_top("Standard object metadata."),
       data=T("map", item=T("string", "byte"))("Base64-encoded values."),
       stringData=STRING_MAP("Plain-text values, merged into data on write."),
       type=STRING("How the data is used (Opaque, kubernetes.io/tls, ...)."),
       immutable=BOOL("Whether the data may not change."))

OBJECT_REFERENCE = define(CORE + "ObjectReference", "A reference to an object.", Opts(open=True),
                          kind=STRING("Kind of the object."), namespace=STRING("Namespace of the object."),
                          name=STRING("Name of the object."), uid=STRING("UID of the object."),
                          apiVersion=STRING("API version of the object."),
                          resourceVersion=STRING("Version of the object."), fieldPath=STRING("A part of the object."))
define(CORE + "ServiceAccount", "An identity for processes that run in pods.",
       Opts(gvk=("", "v1", "ServiceAccount")), **_top("Standard object metadata."),
       secrets=listmap(OBJECT_REFERENCE, "name")("Secrets pods of this account may use."),
       imagePullSecrets=atomic(ref(CORE + "LocalObjectReference"))("Secrets for pulling images."),
       automountServiceAccountToken=BOOL("Whether pods mount a token of this account."))

define(BATCH + "JobSpec", "The pods a job runs to completion.", ("template",),
       parallelism=INT32("Pods running at once."), completions=INT32("Successful pods needed."),
       activeDeadlineSeconds=INT64("Seconds the job may run before it is failed."),
       podFailurePolicy=ANY("How pod failures count."), successPolicy=ANY("When the job succeeds early."),
       backoffLimit=INT32("Retries before the job is failed."),
       backoffLimitPerIndex=INT32("Retries per index (Indexed jobs)."),
       maxFailedIndexes=INT32("Failed indexes before the job fails (Indexed jobs)."),
       selector=LABEL_SELECTOR("Pods of the job; generated unless manualSelector."),
       manualSelector=BOOL("Whether the selector is given by hand."), template=POD_TEMPLATE_SPEC("Pods to run."),
       ttlSecondsAfterFinished=INT32("Seconds a finished job is kept."),
       completionMode=STRING("NonIndexed or Indexed."), suspend=BOOL("Whether no pods are created."),
       podReplacementPolicy=STRING("When a replacement pod is created."),
       managedBy=STRING("Controller that manages the job."))
define(BATCH + "Job", "Pods that run until a number of them succeed.", Opts(gvk=("batch", "v1", "Job")),
       **_top("Standard object metadata."), spec=ref(BATCH + "JobSpec")("Desired behaviour."),
       status=define(BATCH + "JobStatus", "Observed state of the job.", Opts(open=True),
                     active=INT32("Running pods."), succeeded=INT32("Succeeded pods."),
                     failed=INT32("Failed pods."))("Observed state."))
