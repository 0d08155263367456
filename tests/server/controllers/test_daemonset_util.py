"""What the DaemonSet controller decides per node, against upstream's
``pkg/controller/daemon/util/daemonset_util.go`` (``AddOrUpdateDaemonPodTolerations``,
``ReplaceDaemonSetPodNodeNameNodeAffinity``; their cases in ``daemonset_util_test.go``) and
``NodeShouldRunDaemonPod`` in ``daemon_controller.go`` (cases of
``TestNodeShouldRunDaemonPod`` in ``daemon_controller_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.controllers.daemonset import target_node
from kubesched.server.controllers.daemonutil import (
    add_daemon_tolerations, daemon_pod_template, pin_to_node, should_run,
)

NAME_TERM = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}


def test_daemon_tolerations_as_upstream_adds_them() -> None:
    spec: dict[str, Any] = {"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                             "effect": "NoExecute", "tolerationSeconds": 300},
                                            {"key": "dedicated", "operator": "Equal", "value": "x",
                                             "effect": "NoSchedule"}]}
    add_daemon_tolerations(spec)
    got = [(t["key"], t.get("effect"), t.get("tolerationSeconds")) for t in spec["tolerations"]]
    # the not-ready toleration with tolerationSeconds is replaced (same key and effect): no seconds left
    assert got == [("node.kubernetes.io/not-ready", "NoExecute", None), ("dedicated", "NoSchedule", None),
                   ("node.kubernetes.io/unreachable", "NoExecute", None),
                   ("node.kubernetes.io/disk-pressure", "NoSchedule", None),
                   ("node.kubernetes.io/memory-pressure", "NoSchedule", None),
                   ("node.kubernetes.io/pid-pressure", "NoSchedule", None),
                   ("node.kubernetes.io/unschedulable", "NoSchedule", None)]
    host: dict[str, Any] = {"hostNetwork": True}
    add_daemon_tolerations(host)
    assert host["tolerations"][-1] == {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists",
                                       "effect": "NoSchedule"}
    assert len(host["tolerations"]) == 7


def test_template_labels() -> None:
    out = daemon_pod_template({"metadata": {"labels": {"app": "a"}}, "spec": {}}, 3, "abc")
    assert out["metadata"]["labels"] == {"app": "a", "pod-template-generation": "3", "controller-revision-hash": "abc"}


@pytest.mark.parametrize(("affinity", "want"), [
    (None, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [NAME_TERM]}}}),
    ({"podAffinity": {}}, {"podAffinity": {}, "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [NAME_TERM]}}}),
    ({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}},
     {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}],
                       "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [NAME_TERM]}}}),
    # required terms are replaced, whatever they were (the controller checked the node matches them)
    ({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]}}},
     {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [NAME_TERM]}}}),
], ids=["none", "no-node-affinity", "only-preferred", "replace-required"])
def test_pin_to_node(affinity: Any, want: Any) -> None:
    spec: dict[str, Any] = {} if affinity is None else {"affinity": affinity}
    pin_to_node(spec, "node-1")
    assert spec["affinity"] == want
    assert target_node({"spec": spec}) == "node-1"


def _node(labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "node-1", "labels": labels or {}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _tmpl(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


@pytest.mark.parametrize(("template", "node", "want"), [
    (_tmpl(), _node(), (True, True)),
    (_tmpl(nodeSelector={"disk": "ssd"}), _node({"disk": "hdd"}), (False, False)),
    (_tmpl(nodeSelector={"disk": "ssd"}), _node({"disk": "ssd"}), (True, True)),
    (_tmpl(nodeName="node-2"), _node(), (False, False)),
    (_tmpl(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}), _node({"zone": "b"}),
     (False, False)),
    # a NoSchedule taint not tolerated: do not start one, but keep one already there
    (_tmpl(), _node(taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]), (False, True)),
    # NoExecute not tolerated: neither
    (_tmpl(), _node(taints=[{"key": "k", "value": "v", "effect": "NoExecute"}]), (False, False)),
    (_tmpl(tolerations=[{"key": "k", "operator": "Exists"}]),
     _node(taints=[{"key": "k", "value": "v", "effect": "NoExecute"}]), (True, True)),
    # the daemon tolerations let it onto cordoned and not-ready nodes
    (_tmpl(), _node(taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                            {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]), (True, True)),
    (_tmpl(), _node(taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
     (False, True)),
    (_tmpl(hostNetwork=True), _node(taints=[{"key": "node.kubernetes.io/network-unavailable",
                                             "effect": "NoSchedule"}]), (True, True)),
], ids=["plain", "selector-miss", "selector-hit", "other-nodename", "affinity-miss", "noschedule",
        "noexecute", "tolerated", "cordoned-notready", "network-unavailable", "network-unavailable-hostnet"])
def test_should_run(template: dict[str, Any], node: dict[str, Any], want: tuple[bool, bool]) -> None:
    assert should_run(template, node) == want
