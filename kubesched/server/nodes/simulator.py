"""Simulated nodes as one :class:`~kubesched.server.apiserver.server.Component` of ``kubesched serve``.

It runs what a real cluster runs on and for its nodes, sharing one set of informers
(nodes, pods indexed by node, node Leases):

* :class:`~.agent.NodeAgent`: a kubelet per Node object (heartbeats, pod lifecycle);
* :class:`~.lifecycle.NodeLifecycleController`: NotReady and the node taints;
* :class:`~.tainteviction.TaintEvictionController`: evictions from NoExecute taints;
* :class:`~.podgc.PodGC`: pods of deleted nodes, too many finished pods.

``kubesched serve --no-node-agent`` leaves the kubelets out (nodes then go NotReady after
the startup grace period, as unmanaged nodes do); ``--no-node-lifecycle`` the controllers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kubesched.server.controllers.events import EventRecorder
from kubesched.server.controllers.informer import Informer, by_namespace, by_node_name, wait_synced
from kubesched.server.nodes.agent import LEASE_NAMESPACE, AgentOptions, NodeAgent
from kubesched.server.nodes.lifecycle import LifecycleOptions, NodeLifecycleController
from kubesched.server.nodes.podgc import PodGC, PodGCOptions
from kubesched.server.nodes.tainteviction import TaintEvictionController

if TYPE_CHECKING:
    from kubesched.server.apiserver.server import ApiServer

log = logging.getLogger(__name__)


class _Runnable(Protocol):
    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class NodeOptions:
    agent: bool = True
    lifecycle: bool = True
    agent_options: AgentOptions = field(default_factory=AgentOptions)
    lifecycle_options: LifecycleOptions = field(default_factory=LifecycleOptions)
    podgc_options: PodGCOptions = field(default_factory=PodGCOptions)


class NodeSimulator:
    name = "simulated-nodes"

    def __init__(self, options: NodeOptions = NodeOptions()) -> None:
        self.options = options
        self._informers: list[Informer] = []
        self._parts: list[_Runnable] = []

    def start(self, server: "ApiServer") -> None:
        reg = server.registry
        nodes = Informer(reg, "nodes")
        pods = Informer(reg, "pods")
        pods.add_index("node", by_node_name)
        pods.add_index("namespace", by_namespace)
        leases = Informer(reg, "leases.coordination.k8s.io", namespace=LEASE_NAMESPACE)
        self._informers = [nodes, pods, leases]
        opts = self.options
        if opts.agent:
            self._parts.append(NodeAgent(reg, nodes, pods, opts.agent_options))
        if opts.lifecycle:
            self._parts += [
                NodeLifecycleController(reg, nodes, leases, pods, EventRecorder(reg, "node-controller"),
                                        opts.lifecycle_options),
                TaintEvictionController(reg, nodes, pods, EventRecorder(reg, "taint-eviction-controller")),
                PodGC(reg, nodes, pods, opts.podgc_options),
            ]
        for inf in self._informers:
            inf.start()
        if not wait_synced(self._informers):
            log.warning("node caches did not sync")
        for part in self._parts:
            part.start()
        log.info("simulated nodes started: %s", ", ".join(p.name for p in self._parts))

    def stop(self) -> None:
        for part in reversed(self._parts):
            part.stop()
        for inf in self._informers:
            inf.stop()
