"""Finished, terminating and deleted pending pods in ``simulate``.

Upstream facts (tests/fidelity_workloads/UPSTREAM_README.md, "Completed and terminating
pods"): the scheduler's pod informer lists with ``status.phase!=Succeeded,status.phase!=Failed``,
so finished pods use nothing and are reported as ``ignoredPods``; a terminating pod (a
deletionTimestamp and a node) keeps its resources; a pending pod being deleted is popped
and not scheduled (``skipPodSchedule``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from kubesched.cli.main import main


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}


def _pod(name: str, cpu: str, node: str = "", phase: str = "", deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i",
                                            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": phase} if phase else {}}


def test_finished_terminating_and_deleted_pods(tmp_path: Path, capsys: Any) -> None:
    # n1 (2 CPU) holds a Succeeded and a Failed pod of 2 CPU each: invisible, so n1 is empty.
    # n2 (2 CPU) holds a terminating pod of 2 CPU: it keeps them, so n2 is full.
    # "p" (1 CPU): n2 fails "Insufficient cpu" (2 + 1 > 2); n1 fits (0 + 1 <= 2) -> n1.
    # "gone" (pending, being deleted): skipped, no attempt.
    objs = [_node("n1"), _node("n2"), _pod("done", "2", "n1", "Succeeded"), _pod("failed", "2", "n1", "Failed"),
            _pod("term", "2", "n2", "Running", deleting=True), _pod("gone", "1", deleting=True), _pod("p", "1")]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    assert main(["simulate", "-f", str(path), "--single-pass", "--explain", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ignoredPods"] == ["default/done", "default/failed"]
    pods = {p["name"]: p for p in doc["pods"]}
    assert set(pods) == {"gone", "p"}
    assert (pods["gone"]["skipped"], pods["gone"]["attempts"], pods["gone"]["node"]) == (
        "pod is being deleted", [], None)
    (att,) = pods["p"]["attempts"]
    assert att["chosen"] == "n1"
    assert att["filter"]["n2"]["reasons"] == ["Insufficient cpu"]
    assert doc["summary"]["completed"] == 2 and doc["summary"]["skipped"] == 1


def test_terminating_pod_still_counts_for_inter_pod_affinity(tmp_path: Path, capsys: Any) -> None:
    """Upstream InterPodAffinity (filtering.go getExistingAntiAffinityCounts /
    getIncomingAffinityAntiAffinityCounts) walks every pod of the NodeInfo with no
    deletionTimestamp check, unlike PodTopologySpread's countPodsMatchSelector: a terminating
    app=web pod on n2 still repels a pod with required anti-affinity to app=web per hostname."""
    term = _pod("term", "100m", "n2", "Running", deleting=True)
    term["metadata"]["labels"] = {"app": "web"}
    anti = _pod("anti", "100m")
    anti["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([_node("n1"), _node("n2"), term, anti]))
    assert main(["simulate", "-f", str(path), "--single-pass", "--explain", "-o", "json"]) == 0
    (att,) = json.loads(capsys.readouterr().out)["pods"][0]["attempts"]
    assert att["chosen"] == "n1"
    assert att["filter"]["n2"]["plugin"] == "InterPodAffinity"
    assert att["filter"]["n2"]["reasons"] == ["node(s) didn't match pod anti-affinity rules"]


def test_finished_pod_on_a_node_that_is_gone_is_ignored(tmp_path: Path, capsys: Any) -> None:
    """A snapshot's finished Job pod may name a node removed since: the scheduler's informer
    never lists it, so it is reported as ignored rather than rejected."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([_node("n1"), _pod("old", "1", "gone-node", "Succeeded"), _pod("p", "1")]))
    assert main(["simulate", "-f", str(path), "--single-pass", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ignoredPods"] == ["default/old"]
    assert [(p["name"], p["node"]) for p in doc["pods"]] == [("p", "n1")]


def test_explain_says_why_a_pod_was_not_tried(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([_node("n1"), _pod("done", "1", "n1", "Succeeded"),
                                        _pod("gone", "1", deleting=True)]))
    assert main(["explain", "-f", str(path), "default/gone"]) == 0
    assert "not scheduled: pod is being deleted" in capsys.readouterr().out
    assert main(["explain", "-f", str(path), "default/done"]) == 2
    assert "pod default/done: phase Succeeded: finished pods are invisible to the scheduler" in capsys.readouterr().err
