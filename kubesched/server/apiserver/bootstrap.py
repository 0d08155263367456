"""Objects ``kubesched serve`` creates at start-up: ``--nodes N`` Node objects.

Nodes are created only if absent, so a restart with the same data directory keeps the
nodes (and whatever kubectl changed on them: labels, taints, cordons). They start Ready;
the simulated node agent (``kubesched/server/nodes``) takes over their status, heartbeat
Leases and pods when it runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.strategies.base import rfc3339

log = logging.getLogger(__name__)

KUBELET_VERSION = "v1.34.1-kubesched"


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    cpu: str = "8"
    memory: str = "32Gi"
    pods: int = 110
    prefix: str = "node"


def node_names(count: int, prefix: str = "node") -> list[str]:
    width = max(2, len(str(count)))
    return [f"{prefix}-{i:0{width}d}" for i in range(1, count + 1)]


def node_object(name: str, index: int, tpl: NodeTemplate, now: float) -> dict[str, Any]:
    capacity = {"cpu": tpl.cpu, "memory": tpl.memory, "pods": str(tpl.pods)}
    ts = rfc3339(now)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": "kubesched-simulated"}},
        "spec": {},
        "status": {
            "capacity": capacity, "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status", "lastHeartbeatTime": ts,
                            "lastTransitionTime": ts}],
            "addresses": [{"type": "InternalIP", "address": f"10.{(index >> 16) & 255}.{(index >> 8) & 255}."
                                                            f"{index & 255}"},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": KUBELET_VERSION,
                         "osImage": "kubesched simulated node", "kernelVersion": "", "operatingSystem": "linux",
                         "architecture": "amd64", "containerRuntimeVersion": "kubesched://simulated",
                         "machineID": "", "systemUUID": "", "bootID": ""},
        },
    }


def ensure_nodes(registry: Registry, count: int, tpl: NodeTemplate = NodeTemplate()) -> list[str]:
    """Create the template's nodes that do not exist yet; return the names created."""
    created = []
    for i, name in enumerate(node_names(count, tpl.prefix), 1):
        try:
            registry.get("nodes", None, name)
            continue
        except ApiError as exc:
            if exc.code != 404:
                raise
        registry.create("nodes", None, node_object(name, i, tpl, registry.clock()))
        created.append(name)
    if created:
        log.info("created %d node(s)", len(created))
    return created
