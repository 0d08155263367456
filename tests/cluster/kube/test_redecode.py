"""``redecode_pod``: a pod's new version decoded from its previous one must equal a full
decode of the new version, field by field, and reuse the previous spec-derived values only
when the spec (but ``nodeName``) and the metadata the decode reads did not change."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.cluster.kube.resources import PODS, decode_pod, redecode_pod


def base_raw() -> dict[str, Any]:
    """A pod as the API server returns it after defaulting (tolerations, policies)."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "10",
                     "labels": {"app": "web"}, "annotations": {"a": "b"},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "uid": "rs", "controller": True}]},
        "spec": {
            "containers": [{"name": "c", "image": "nginx",
                            "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                            "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]}],
            "schedulerName": "default-scheduler", "priority": 0, "restartPolicy": "Always",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 300}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                           "labelSelector": {"matchLabels": {"app": "web"}}}],
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
        },
        "status": {"phase": "Pending"},
    }


def fields_of(p: Pod) -> dict[str, Any]:
    return {f.name: getattr(p, f.name) for f in dataclasses.fields(Pod) if f.name not in ("seq", "raw")}


def bound(raw: dict[str, Any], node: str = "n7") -> dict[str, Any]:
    new = copy.deepcopy(raw)
    new["spec"]["nodeName"] = node
    new["metadata"]["resourceVersion"] = "11"
    new["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    return new


def running(raw: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(raw)
    new["metadata"]["resourceVersion"] = "12"
    new["status"].update({"phase": "Running", "startTime": "2026-01-01T00:00:00Z", "podIP": "10.0.0.1",
                          "nominatedNodeName": "n7"})
    return new


def test_the_pod_resource_decodes_updates_from_the_previous_version() -> None:
    assert PODS.redecode is redecode_pod


@pytest.mark.parametrize("step", ["bind", "status", "deleting"])
def test_status_and_bind_updates_reuse_the_spec(step: str) -> None:
    old_raw = base_raw()
    if step == "status":
        old_raw = bound(old_raw)
    prev = decode_pod(old_raw)
    new_raw = {"bind": bound, "status": running}.get(step, lambda r: r)(copy.deepcopy(old_raw))
    if step == "deleting":
        new_raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:05Z"
    got, want = redecode_pod(prev, new_raw), decode_pod(new_raw)
    assert fields_of(got) == fields_of(want)
    assert got.raw is new_raw and got.seq > prev.seq
    assert got.containers is prev.containers and got.affinity is prev.affinity  # reused, not decoded
    if step == "bind":
        assert got.node_name == "n7" and prev.node_name == ""
    if step == "status":
        assert (got.phase, got.start_time, got.nominated_node_name) == ("Running", "2026-01-01T00:00:00Z", "n7")
    if step == "deleting":
        assert got.deletion_timestamp == "2026-01-01T00:00:05Z"


def _label(r: dict[str, Any]) -> None:
    r["metadata"]["labels"]["app"] = "api"


def _owner(r: dict[str, Any]) -> None:
    r["metadata"]["ownerReferences"] = []


def _uid(r: dict[str, Any]) -> None:
    r["metadata"]["uid"] = "u-2"


def _requests(r: dict[str, Any]) -> None:
    r["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"


def _null_field(r: dict[str, Any]) -> None:
    """A key with a null value in place of a removed one: not the same spec."""
    del r["spec"]["priority"]
    r["spec"]["hostname"] = None


def _bind_and_gate(r: dict[str, Any]) -> None:
    r["spec"]["nodeName"] = "n1"
    r["spec"]["schedulingGates"] = [{"name": "g"}]


def _unbind(r: dict[str, Any]) -> None:
    r["spec"].pop("nodeName")


@pytest.mark.parametrize("change", [_label, _owner, _uid, _requests, _null_field, _bind_and_gate, _unbind])
def test_other_changes_are_decoded_in_full(change: Any) -> None:
    old_raw = bound(base_raw())
    prev = decode_pod(old_raw)
    new_raw = copy.deepcopy(old_raw)
    change(new_raw)
    got, want = redecode_pod(prev, new_raw), decode_pod(new_raw)
    assert fields_of(got) == fields_of(want)
    assert got.containers is not prev.containers  # decoded again
