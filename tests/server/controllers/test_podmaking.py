"""The objects the workload controllers create (kubesched.server.controllers.podmaking), with
expected values written from upstream's controllers and their tests (each test names its file)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kubesched.server.controllers import podmaking as M


def _owner(kind: str, name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}, "annotations": {"a": "1"},
                                               "finalizers": ["f"]},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}, **spec}}


def test_pod_from_template_copies_labels_annotations_finalizers_and_sets_the_controller_ref() -> None:
    """pkg/controller/controller_utils.go GetPodFromTemplate: desired labels, annotations and
    finalizers from the template, GenerateName from getPodsPrefix (``<owner>-``), one
    ownerReference from metav1.NewControllerRef (controller and blockOwnerDeletion true)."""
    rs = _owner("ReplicaSet")
    pod = M.pod_from_template(rs["spec"]["template"], rs, "apps/v1", "ReplicaSet")
    assert pod["metadata"] == {
        "generateName": "web-", "namespace": "ns", "labels": {"app": "web"}, "annotations": {"a": "1"},
        "finalizers": ["f"],
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "uid-web",
                             "controller": True, "blockOwnerDeletion": True}]}
    assert pod["spec"] == {"containers": [{"name": "c", "image": "x"}]}
    pod["spec"]["containers"][0]["image"] = "changed"  # a copy, not the template
    assert rs["spec"]["template"]["spec"]["containers"][0]["image"] == "x"


def test_new_replicaset_carries_the_template_hash_in_name_labels_selector_and_template() -> None:
    """pkg/controller/deployment/sync.go getNewReplicaSet: name ``<deployment>-<hash>``,
    pod-template-hash added to the template's labels, the selector's matchLabels and the
    ReplicaSet's labels; controller reference to the Deployment."""
    d = _owner("Deployment", replicas=3)
    rs = M.new_replicaset(d, 3, {"deployment.kubernetes.io/revision": "1"})
    h = rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": h}}
    assert rs["spec"]["replicas"] == 3
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789")  # rand.SafeEncodeString's alphabet
    assert M.new_replicaset(d, 3, {})["metadata"]["name"] == rs["metadata"]["name"]  # stable


def test_statefulset_pod_and_claims() -> None:
    """pkg/controller/statefulset/stateful_set_utils.go: getPodName ``<set>-<ordinal>``;
    getPersistentVolumeClaimName ``<claim>-<set>-<ordinal>``; the pod-name and pod-index
    labels; hostname the pod's name, subdomain the serviceName; the claim's labels are the
    template's plus the set's selector matchLabels (updateIdentity, updateStorage,
    getPersistentVolumeClaims)."""
    sts = _owner("StatefulSet", serviceName="svc", volumeClaimTemplates=[
        {"metadata": {"name": "data", "labels": {"tier": "db"}},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])
    pod = M.statefulset_pod(sts, 2)
    assert pod["metadata"]["name"] == "web-2" and "generateName" not in pod["metadata"]
    labels = pod["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-2"
    assert labels["apps.kubernetes.io/pod-index"] == "2"
    assert labels["controller-revision-hash"].startswith("web-")
    assert pod["spec"]["hostname"] == "web-2" and pod["spec"]["subdomain"] == "svc"
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-2"}}]
    claim = M.statefulset_claim(sts, sts["spec"]["volumeClaimTemplates"][0], 2)
    assert claim["metadata"] == {"name": "data-web-2", "namespace": "ns", "labels": {"tier": "db", "app": "web"}}


@pytest.mark.parametrize(("job", "index", "generate_name"), [
    ("indexed-job", 1, "indexed-job-1-"),
    ("hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo", 1,
     "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-"),
    ("hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhoo", 1,
     "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-"),
], ids=["short", "long", "long-with-suffix"])
def test_indexed_job_pod_generate_name(job: str, index: int, generate_name: str) -> None:
    """pkg/controller/job/indexed_job_utils_test.go TestPodGenerateNameWithIndex (the table)."""
    assert M.job_pod(_owner("Job", job), index)["metadata"]["generateName"] == generate_name


def test_indexed_job_pod_index_annotation_label_hostname_and_env() -> None:
    """pkg/controller/job/job_controller.go manageJob and indexed_job_utils.go: the index as
    annotation and (PodIndexLabel, GA) label batch.kubernetes.io/job-completion-index, hostname
    ``<job>-<index>``, JOB_COMPLETION_INDEX from the label (addCompletionIndexEnvVariable)."""
    pod = M.job_pod(_owner("Job", "train"), 3)
    assert pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "3"
    assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "3"
    assert pod["spec"]["hostname"] == "train-3"
    assert pod["spec"]["containers"][0]["env"] == [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}]
    plain = M.job_pod(_owner("Job", "train"))
    assert plain["metadata"]["generateName"] == "train-" and "hostname" not in plain["spec"]


def test_daemon_pod_tolerations_and_node_affinity() -> None:
    """pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations (not-ready
    and unreachable NoExecute; disk-pressure, memory-pressure, pid-pressure, unschedulable
    NoSchedule; network-unavailable only for hostNetwork) and
    ReplaceDaemonSetPodNodeNameNodeAffinity (one term: matchFields metadata.name In [node])."""
    pod = M.daemon_pod(_owner("DaemonSet", "agent"), "node-7")
    assert pod["metadata"]["generateName"] == "agent-"
    assert pod["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["spec"]["affinity"] == {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-7"]}]}]}}}
    host = _owner("DaemonSet", "net")
    host["spec"]["template"]["spec"]["hostNetwork"] = True
    assert {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"} \
        in M.daemon_pod(host, "n")["spec"]["tolerations"]


def test_cronjob_job_name_and_scheduled_timestamp() -> None:
    """pkg/controller/cronjob/utils.go getJobName (``<cronjob>-<minutes since the epoch>``)
    and getJobFromTemplate2 (annotation batch.kubernetes.io/cronjob-scheduled-timestamp,
    RFC 3339). 02:00 UTC on 1970-01-01 is 7200 s = 120 minutes."""
    cj = {"kind": "CronJob", "metadata": {"name": "nightly", "namespace": "ns", "uid": "u"},
          "spec": {"schedule": "0 2 * * *", "jobTemplate": {"metadata": {"labels": {"l": "v"}},
                                                          "spec": {"template": {"spec": {}}}}}}
    job = M.cronjob_job(cj, 7200.0, dt.timezone.utc)
    assert job["metadata"]["name"] == "nightly-120"
    assert job["metadata"]["annotations"] == {"batch.kubernetes.io/cronjob-scheduled-timestamp": "1970-01-01T02:00:00Z"}
    assert job["metadata"]["labels"] == {"l": "v"}
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
