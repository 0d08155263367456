"""The cluster ``kubesched serve`` simulates around its API server: flags and wiring.

Kept apart from :mod:`kubesched.cli.serve` (which owns the server's own flags) so each
part of the serve command stays small: node pools (``--nodes ... --zones``,
``--node-pool``), the controller manager (Deployments, ReplicaSets, StatefulSets, the
PV controller, the simulated CSI provisioner, ephemeral volumes, garbage collection: on
unless ``--no-controllers``) and the simulated nodes (kubelets unless
``--no-node-agent``; node lifecycle, taint eviction and pod GC unless
``--no-node-lifecycle``), with their timings.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import KubeschedError

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry
    from kubesched.server.nodes import NodePool


def add_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("simulated nodes")
    g.add_argument("--node-labels", default="", metavar="K=V,...", help="labels of each --nodes node")
    g.add_argument("--zones", type=int, default=0, metavar="N",
                   help="spread --nodes over N zones (topology.kubernetes.io/zone=zone-a, zone-b, ...)")
    g.add_argument("--node-pool", action="append", default=[], metavar="FILE",
                   help="YAML list of node pools {count, namePrefix, capacity, labels, taints, zones, csiDrivers, dra} "
                        "(repeatable)")
    g.add_argument("--no-node-agent", action="store_true",
                   help="no simulated kubelets: no heartbeats, pods never start")
    g.add_argument("--no-node-lifecycle", action="store_true",
                   help="no node lifecycle controller, taint eviction or pod garbage collection")
    g.add_argument("--pod-start-delay", type=float, default=1.0, metavar="SECONDS",
                   help="a bound pod is Running this long after its node sees it (default 1)")
    g.add_argument("--pod-stop-delay", type=float, default=1.0, metavar="SECONDS",
                   help="a deleted pod's containers stop after min(grace period, this) (default 1)")
    g.add_argument("--node-heartbeat-interval", type=float, default=10.0, metavar="SECONDS",
                   help="node Lease renewal period (default 10)")
    g.add_argument("--node-status-interval", type=float, default=300.0, metavar="SECONDS",
                   help="node status report period when nothing changed (default 300, the kubelet's "
                        "nodeStatusReportFrequency)")
    g.add_argument("--node-monitor-period", type=float, default=5.0, metavar="SECONDS",
                   help="how often the node lifecycle controller checks heartbeats (default 5)")
    g.add_argument("--node-monitor-grace-period", type=float, default=50.0, metavar="SECONDS",
                   help="silence after which a node is NotReady (default 50, upstream's since v1.32)")
    g.add_argument("--node-startup-grace-period", type=float, default=60.0, metavar="SECONDS",
                   help="the same for a node that never reported (default 60)")
    g.add_argument("--node-eviction-rate", type=float, default=0.1, metavar="QPS",
                   help="nodes per second tainted NoExecute in a healthy zone (default 0.1)")
    g.add_argument("--pod-gc-quarantine", type=float, default=40.0, metavar="SECONDS",
                   help="pods of a deleted node are removed after this (default 40)")
    c = p.add_argument_group("controllers")
    c.add_argument("--no-controllers", action="store_true",
                   help="no workload (Deployment, ReplicaSet, StatefulSet) or storage (PV binding, provisioning, "
                        "ephemeral volumes) controllers and no garbage collector")
    c.add_argument("--controller-seed", type=int, default=None, metavar="N",
                   help="seed of the random suffixes of generated pod names (default: random)")


def pools(args: argparse.Namespace) -> "list[NodePool]":
    """The node pools the flags ask for (validated; raises KubeschedError)."""
    from kubesched.server.nodes import load_pool_file, template_pool

    if args.zones < 0:
        raise KubeschedError("--zones must not be negative")
    for flag in ("pod_start_delay", "pod_stop_delay", "node_monitor_grace_period", "node_startup_grace_period",
                 "pod_gc_quarantine", "node_eviction_rate"):
        if getattr(args, flag) < 0:
            raise KubeschedError(f"--{flag.replace('_', '-')} must not be negative")
    for flag in ("node_heartbeat_interval", "node_status_interval", "node_monitor_period"):
        if getattr(args, flag) <= 0:
            raise KubeschedError(f"--{flag.replace('_', '-')} must be positive")
    out = [p for f in args.node_pool for p in load_pool_file(f)]
    if args.nodes:
        out.append(template_pool(args.nodes, args.node_cpu, args.node_memory, args.node_pods, args.node_labels,
                                 args.zones))
    prefixes = [p.name_prefix for p in out]
    if len(set(prefixes)) != len(prefixes):
        raise KubeschedError("node pools must have different namePrefix (--nodes uses \"node\")")
    return out


def create_nodes(registry: "Registry", node_pools: "list[NodePool]") -> None:
    from kubesched.server.nodes import ensure_pools

    ensure_pools(registry, node_pools)


def components(args: argparse.Namespace, kubernetes_version: str) -> list[Any]:
    """The Components to run beside the API server, as the flags ask."""
    from kubesched.server.controllers import ControllerManager, ControllerOptions
    from kubesched.server.nodes import AgentOptions, LifecycleOptions, NodeOptions, NodeSimulator, PodGCOptions

    out: list[Any] = []
    if not args.no_controllers:
        out.append(ControllerManager(ControllerOptions(seed=args.controller_seed)))
    if not (args.no_node_agent and args.no_node_lifecycle):
        out.append(NodeSimulator(NodeOptions(
            agent=not args.no_node_agent, lifecycle=not args.no_node_lifecycle,
            agent_options=AgentOptions(heartbeat_interval=args.node_heartbeat_interval,
                                       status_interval=args.node_status_interval,
                                       pod_start_delay=args.pod_start_delay, pod_stop_delay=args.pod_stop_delay,
                                       kubernetes_version=kubernetes_version),
            lifecycle_options=LifecycleOptions(monitor_period=args.node_monitor_period,
                                               monitor_grace_period=args.node_monitor_grace_period,
                                               startup_grace_period=args.node_startup_grace_period,
                                               eviction_rate=args.node_eviction_rate),
            podgc_options=PodGCOptions(period=min(20.0, max(args.node_monitor_period, 0.5)),
                                       quarantine=args.pod_gc_quarantine))))
    return out
