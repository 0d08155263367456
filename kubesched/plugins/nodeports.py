"""NodePorts: a pod fits a node only if none of its host ports is already taken there
(upstream ``plugins/nodeports``), with ``HostPortInfo``'s 0.0.0.0 wildcard rules.

PreFilter collects the pod's host ports once (and skips pods that have none); Filter and
its batch form then only look at each node's used ports. The used ports live in each
NodeInfo (no NodeTable column), so the batch form visits rows, cheaply: rows without any
used port pass at once.
"""

from __future__ import annotations

from collections.abc import Hashable

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import ContainerPort, Pod
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.events import (
    ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource,
)
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unschedulable
from kubesched.framework.types import HostPorts, NodeInfo
from kubesched.plugins import names

logger = logging.getLogger(__name__)

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_REJECT = unschedulable(ERR_REASON)

# (host IP, protocol, host port)
_Want = tuple[str, str, int]


def get_host_ports(pod: Pod) -> tuple[ContainerPort, ...]:
    """Upstream ``util.GetHostPorts``: ports with a host port of restartable (sidecar) init
    containers, which run for the pod's whole life, then of the regular containers."""
    ports = [p for c in pod.init_containers if c.restart_policy == "Always"
             for p in c.ports if p.host_port > 0]
    ports.extend(p for c in pod.containers for p in c.ports if p.host_port > 0)
    return tuple(ports)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The pod's wanted host ports; not affected by AddPod/RemovePod."""

    wants: tuple[_Want, ...]

    def clone(self) -> "_PreFilterState":
        return self


_PRE_FILTER_KEY: StateKey[_PreFilterState] = StateKey("PreFilter" + names.NODE_PORTS)


def _wants(ports: Sequence[ContainerPort]) -> tuple[_Want, ...]:
    return tuple((p.host_ip, p.protocol, p.host_port) for p in ports)


def _fits(wants: Sequence[_Want], used: HostPorts) -> bool:
    if not used.ports:
        return True
    return not any(used.conflicts(ip, proto, port) for ip, proto, port in wants)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Upstream ``nodeports.Fits``: the pod's host ports are all free on the node."""
    return _fits(_wants(get_host_ports(pod)), node_info.used_ports)


class NodePorts:
    name = names.NODE_PORTS

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same host ports get the same results on a node (NodeLocalPlugin)."""
        return get_host_ports(pod)

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        ports = get_host_ports(pod)
        if not ports:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, _PreFilterState(_wants(ports)))
        return None, SUCCESS

    @staticmethod
    def _state(state: CycleState) -> _PreFilterState | Status:
        s = state.get(_PRE_FILTER_KEY)
        if s is None:
            return error(f'reading "{_PRE_FILTER_KEY.name}" from cycleState: not found')
        return s

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        return SUCCESS if _fits(s.wants, node_info.used_ports) else _REJECT

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable,
                     idx: np.ndarray) -> np.ndarray | Status:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        wants, infos = s.wants, table.infos
        return np.fromiter((_fits(wants, infos[i].used_ports) for i in idx.tolist()),
                           dtype=bool, count=idx.size)

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Container ports are immutable, so pod updates never matter.
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add)),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue only when the deleted pod was placed (or nominated) and shared a port."""
        if not isinstance(old, Pod):
            return QueueingHint.Queue
        if not old.node_name and not old.nominated_node_name:
            return QueueingHint.QueueSkip
        ports = get_host_ports(old)
        if not ports:
            return QueueingHint.QueueSkip
        used = HostPorts()
        for p in ports:
            used.add(p.host_ip, p.protocol, p.host_port)
        if _fits(_wants(get_host_ports(pod)), used):
            logger.debug("deleted pod %s shares no host port with %s", old.key, pod.key)
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

