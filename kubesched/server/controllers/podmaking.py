"""What the workload controllers create, as pure functions of the workload object.

One implementation for both places that turn workloads into pods: ``serve``'s
controllers (which then write the result through the API server) and the offline
commands (:mod:`kubesched.sim.expand`, which add it to the simulated cluster). Names are
the caller's: a controller draws random suffixes, the offline commands seeded ones.

As upstream:

* :func:`pod_from_template`: ``controller.GetPodFromTemplate``
  (``pkg/controller/controller_utils.go``): the template's labels, annotations and
  finalizers, ``generateName`` ``<owner>-``, one controller reference, the template's spec;
* :func:`new_replicaset`: the Deployment controller's new ReplicaSet
  (``pkg/controller/deployment/sync.go`` ``getNewReplicaSet``): ``<deployment>-<hash>``
  with ``pod-template-hash`` added to its labels, selector and template;
* :func:`statefulset_pod`, :func:`statefulset_claim`: ``newVersionedStatefulSetPod`` and
  ``getPersistentVolumeClaims`` (``pkg/controller/statefulset/stateful_set_utils.go``):
  pod ``<set>-<ordinal>`` with the pod-name, pod-index and revision labels, hostname and
  subdomain; claim ``<template>-<set>-<ordinal>`` with the template's labels plus the
  selector's ``matchLabels``, mounted as the template's volume;
* :func:`job_pod`: ``manageJob`` (``pkg/controller/job/job_controller.go``) and
  ``indexed_job_utils.go``: for an Indexed Job the completion index as annotation and
  label (``batch.kubernetes.io/job-completion-index``), hostname ``<job>-<index>``,
  ``generateName`` ``<job>-<index>-`` and the ``JOB_COMPLETION_INDEX`` environment variable;
* :func:`daemon_pod`: the DaemonSet controller's pod for one node (``daemon_controller.go``
  ``syncNodes``): daemon tolerations, revision labels, node affinity on ``metadata.name``;
* :func:`cronjob_job`: ``getJobFromTemplate2`` (``pkg/controller/cronjob/utils.go``).
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from kubesched.server.controllers.base import meta, owner_reference
from kubesched.server.controllers.daemonutil import daemon_pod_template, pin_to_node
from kubesched.server.controllers.naming import HASH_LABEL, template_hash

Obj = dict[str, Any]

RS_API, RS_KIND = "apps/v1", "ReplicaSet"
STS_API, STS_KIND = "apps/v1", "StatefulSet"
JOB_API, JOB_KIND = "batch/v1", "Job"
DS_API, DS_KIND = "apps/v1", "DaemonSet"
CJ_API, CJ_KIND = "batch/v1", "CronJob"
RC_API, RC_KIND = "v1", "ReplicationController"

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_GENERATED_NAME = 58  # names.MaxGeneratedNameLength: 63 minus the 5-character suffix


def spec_of(obj: Obj) -> dict[str, Any]:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


def template_of(obj: Obj) -> dict[str, Any]:
    t = spec_of(obj).get("template")
    return t if isinstance(t, dict) else {}


def pods_prefix(owner_name: str) -> str:
    """``getPodsPrefix``: ``<owner>-`` (cut to what a generated name may keep)."""
    prefix = f"{owner_name}-"
    return prefix if len(prefix) <= MAX_GENERATED_NAME else prefix[:MAX_GENERATED_NAME]


def pod_from_template(template: Obj, owner: Obj, api_version: str, kind: str) -> Obj:
    """``GetPodFromTemplate``: a pod to create (``generateName`` set, no name yet)."""
    tmeta = meta(template)
    pmeta: dict[str, Any] = {"generateName": pods_prefix(str(meta(owner).get("name"))),
                             "namespace": str(meta(owner).get("namespace") or ""),
                             "labels": dict(tmeta.get("labels") or {}),
                             "ownerReferences": [owner_reference(owner, api_version, kind)]}
    for k in ("annotations", "finalizers"):
        if tmeta.get(k):
            pmeta[k] = copy.deepcopy(tmeta[k])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pmeta,
            "spec": copy.deepcopy(template.get("spec") or {})}


# -- Deployment -> ReplicaSet -------------------------------------------------------------------
def new_replicaset(d: Obj, replicas: int, annotations: dict[str, str]) -> Obj:
    """The ReplicaSet a Deployment creates for its current template (``getNewReplicaSet``)."""
    collisions = (d.get("status") or {}).get("collisionCount")
    template = copy.deepcopy(template_of(d))
    h = template_hash(template, collisions)
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: h}
    selector = copy.deepcopy(spec_of(d).get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: h}
    rs_spec: dict[str, Any] = {"replicas": replicas, "selector": selector, "template": template}
    if spec_of(d).get("minReadySeconds") is not None:
        rs_spec["minReadySeconds"] = spec_of(d)["minReadySeconds"]
    return {"apiVersion": RS_API, "kind": RS_KIND,
            "metadata": {"name": f"{meta(d).get('name')}-{h}", "namespace": str(meta(d).get("namespace") or ""),
                         "labels": dict(tmeta["labels"]), "annotations": annotations,
                         "ownerReferences": [owner_reference(d, "apps/v1", "Deployment")]},
            "spec": rs_spec}


# -- StatefulSet --------------------------------------------------------------------------------
def claim_name(template: Obj, set_name: str, ordinal: int) -> str:
    return f"{meta(template).get('name')}-{set_name}-{ordinal}"


def statefulset_claim(sts: Obj, template: Obj, ordinal: int) -> Obj:
    """The claim of ``template`` (one of ``volumeClaimTemplates``) for replica ``ordinal``."""
    labels = dict(meta(template).get("labels") or {})
    labels.update((spec_of(sts).get("selector") or {}).get("matchLabels") or {})
    cmeta: dict[str, Any] = {"name": claim_name(template, str(meta(sts).get("name")), ordinal),
                             "namespace": str(meta(sts).get("namespace") or "")}
    if labels:
        cmeta["labels"] = labels
    if meta(template).get("annotations"):
        cmeta["annotations"] = copy.deepcopy(meta(template)["annotations"])
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": cmeta,
            "spec": copy.deepcopy(template.get("spec") or {})}


def statefulset_pod(sts: Obj, ordinal: int) -> Obj:
    """Replica ``ordinal`` of ``sts``, its volumes pointing at its claims."""
    set_name = str(meta(sts).get("name"))
    spec = spec_of(sts)
    pod = pod_from_template(template_of(sts), sts, STS_API, STS_KIND)
    pod_name = f"{set_name}-{ordinal}"
    pmeta = pod["metadata"]
    pmeta.pop("generateName", None)
    pmeta["name"] = pod_name
    pmeta["labels"].update({POD_NAME_LABEL: pod_name, POD_INDEX_LABEL: str(ordinal),
                            REVISION_LABEL: f"{set_name}-{template_hash(spec.get('template'))}"})
    pod_spec = pod["spec"]
    volumes = [{"name": meta(t).get("name"),
                "persistentVolumeClaim": {"claimName": claim_name(t, set_name, ordinal)}}
               for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
    claimed = {v["name"] for v in volumes}
    if volumes:
        pod_spec["volumes"] = volumes + [v for v in pod_spec.get("volumes") or [] if v.get("name") not in claimed]
    pod_spec["hostname"] = pod_name
    if spec.get("serviceName"):
        pod_spec["subdomain"] = spec["serviceName"]
    return pod


# -- Job ----------------------------------------------------------------------------------------
def is_indexed(job: Obj) -> bool:
    return spec_of(job).get("completionMode") == "Indexed"


def _add_index_env(container: Any) -> None:
    if not isinstance(container, dict):
        return
    env = container.setdefault("env", [])
    if any(isinstance(e, dict) and e.get("name") == COMPLETION_INDEX_ENV for e in env):
        return
    env.append({"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
        "fieldPath": f"metadata.labels['{COMPLETION_INDEX}']"}}})


def job_pod(job: Obj, index: int | None = None) -> Obj:
    """A pod of ``job``; with ``index``, the pod of that completion index (Indexed Jobs)."""
    pod = pod_from_template(template_of(job), job, JOB_API, JOB_KIND)
    if index is None:
        return pod
    name = str(meta(job).get("name"))
    pmeta, spec = pod["metadata"], pod["spec"]
    pmeta.setdefault("annotations", {})[COMPLETION_INDEX] = str(index)
    pmeta["labels"][COMPLETION_INDEX] = str(index)
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            _add_index_env(c)
    spec["hostname"] = f"{name}-{index}"
    suffix = f"-{index}-"
    prefix = name + suffix
    pmeta["generateName"] = prefix if len(prefix) <= MAX_GENERATED_NAME else \
        prefix[:MAX_GENERATED_NAME - len(suffix)] + suffix
    return pod


def completion_index(pod: Obj) -> int | None:
    """``getCompletionIndex``: the pod's index annotation, None when absent or invalid."""
    v = (meta(pod).get("annotations") or {}).get(COMPLETION_INDEX)
    if not isinstance(v, str) or not v.isdigit():
        return None
    return int(v)


# -- DaemonSet ----------------------------------------------------------------------------------
def daemon_revision(ds: Obj) -> str:
    return template_hash(template_of(ds))


def daemon_pod(ds: Obj, node: str, revision: str | None = None) -> Obj:
    """The daemon pod for ``node``: the daemon template, pinned to the node by affinity."""
    template = daemon_pod_template(template_of(ds), int(meta(ds).get("generation") or 1),
                                   revision if revision is not None else daemon_revision(ds))
    pod = pod_from_template(template, ds, DS_API, DS_KIND)
    pin_to_node(pod["spec"], node)
    return pod


# -- CronJob ------------------------------------------------------------------------------------
def cronjob_job_name(cj_name: str, scheduled: float) -> str:
    """``getJobName``: the scheduled time in minutes since the epoch."""
    return f"{cj_name}-{int(scheduled) // 60}"


def cronjob_job(cj: Obj, scheduled: float, tz: dt.tzinfo) -> Obj:
    """The Job a CronJob creates for the run scheduled at ``scheduled``."""
    template = spec_of(cj).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[SCHEDULED_ANNOTATION] = dt.datetime.fromtimestamp(scheduled, tz).isoformat().replace("+00:00", "Z")
    return {"apiVersion": JOB_API, "kind": JOB_KIND,
            "metadata": {"name": cronjob_job_name(str(meta(cj).get("name")), scheduled),
                         "namespace": str(meta(cj).get("namespace") or ""),
                         "labels": dict(tmeta.get("labels") or {}), "annotations": annotations,
                         "ownerReferences": [owner_reference(cj, CJ_API, CJ_KIND)]},
            "spec": copy.deepcopy(template.get("spec") or {})}
