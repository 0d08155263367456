"""Simulated kubelets of a release: the version in the node info and the features a default
kubelet of that release declares in ``status.declaredFeatures`` (KEP-5328).

Expected lists, by hand from the kubelet feature gates' documented defaults
(kubernetes.io feature-gate pages) intersected with component-helpers' registry per release
(``nodedeclaredfeatures/features/registry.go``): NodeDeclaredFeatures is off in 1.35, so a
1.35 kubelet declares nothing; from 1.36 RestartAllContainersOnContainerExits,
ExtendWebSocketsToKubelet and InPlacePodLevelResourcesVerticalScaling are beta and on;
InPlacePodVerticalScalingInitContainers is GA in 1.37. The list is sorted, as the API
documents it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from cluster_harness import FAST_NODES, Cluster, eventually

from kubesched.api.nodedeclaredfeatures import kubelet_declared
from kubesched.server.nodes import NodePool

MakeCluster = Callable[..., Cluster]


def test_what_a_default_kubelet_declares_per_release() -> None:
    assert kubelet_declared("1.34") == [] and kubelet_declared("1.35") == []
    assert kubelet_declared("1.36") == ["ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
                                        "RestartAllContainersOnContainerExits"]
    assert kubelet_declared("1.37") == ["ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
                                        "InPlacePodVerticalScalingInitContainers",
                                        "RestartAllContainersOnContainerExits"]


@pytest.mark.parametrize(("release", "git"), [("1.35", "v1.35.4"), ("1.36", "v1.36.0")])
def test_serve_nodes_report_their_release(node_cluster: MakeCluster, release: str, git: str) -> None:
    opts = dataclasses.replace(FAST_NODES, agent_options=dataclasses.replace(FAST_NODES.agent_options,
                                                                             status_interval=0.5,
                                                                             kubernetes_version=release))
    c = node_cluster(pools=[NodePool(1, capacity={"cpu": "4", "memory": "8Gi", "pods": "110"})], nodes=opts)
    status = eventually(lambda: (n := c.get("nodes", None, "node-01")) is not None
                        and n["status"]["nodeInfo"]["kubeletVersion"] == f"{git}-kubesched" and n["status"])
    assert status.get("declaredFeatures", []) == kubelet_declared(release)
    # a list given to the node is kept by later heartbeats
    c.registry.patch("nodes", None, "node-01", "application/merge-patch+json",
                     {"status": {"declaredFeatures": ["X"]}}, subresource="status")
    eventually(lambda: (n := c.get("nodes", None, "node-01")) is not None
                       and n["status"]["conditions"][-1]["lastHeartbeatTime"] != status["conditions"][-1]["lastHeartbeatTime"])
    assert (c.get("nodes", None, "node-01") or {})["status"]["declaredFeatures"] == ["X"]
