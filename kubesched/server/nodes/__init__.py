"""Simulated nodes for ``kubesched serve``: kubelets, node lifecycle, taint eviction, pod GC.

Map of the package::

    simulator.py     NodeSimulator: the Component that runs everything below
    agent.py         NodeAgent: a simulated kubelet per Node (Lease, status, pods), writes in batches
    heartbeat.py     a kubelet's Lease renewals (on a grid) and node status posts
    podstatus.py     pod statuses as a kubelet writes them; durations; pod CIDRs
    failures.py      kubelet-side failures: admission, image pulls, crash loops (pure)
    failing.py       the agent's per-pod state machine for those failures
    lifecycle.py     node lifecycle controller: NotReady, taints, NoExecute tainting
    zones.py         zone states and the eviction rate limits
    tainteviction.py evictions from NoExecute taints after tolerationSeconds
    podgc.py         pods of deleted nodes; too many terminated pods
    taints.py        taint and toleration helpers
    pools.py         the nodes ``--nodes``/``--node-pool`` create
    admin.py         ``kubesched node stop|start|kill`` against a running server
"""

from kubesched.server.nodes.agent import HEARTBEAT_ANNOTATION, RUN_DURATION_ANNOTATION, AgentOptions
from kubesched.server.nodes.lifecycle import LifecycleOptions
from kubesched.server.nodes.podgc import PodGCOptions
from kubesched.server.nodes.pools import NodePool, ensure_pools, load_pool_file, template_pool
from kubesched.server.nodes.simulator import NodeOptions, NodeSimulator

__all__ = [
    "HEARTBEAT_ANNOTATION", "RUN_DURATION_ANNOTATION", "AgentOptions", "LifecycleOptions", "NodeOptions",
    "NodePool", "NodeSimulator", "PodGCOptions", "ensure_pools", "load_pool_file", "template_pool",
]
