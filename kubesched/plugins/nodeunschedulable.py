"""NodeUnschedulable: rejects nodes with ``spec.unschedulable`` unless the pod tolerates the
``node.kubernetes.io/unschedulable:NoSchedule`` taint (upstream ``nodeunschedulable``)."""

from __future__ import annotations

from collections.abc import Hashable

from typing import Any

import numpy as np

from kubesched.api.objects import Pod, Taint
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
_REJECT = unresolvable(ERR_REASON_UNSCHEDULABLE)


def _tolerates(pod: Pod) -> bool:
    return any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations)


class NodeUnschedulable:
    name = names.NODE_UNSCHEDULABLE

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same tolerations get the same results on a node (NodeLocalPlugin)."""
        return pod.tolerations

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None or not node.unschedulable or _tolerates(pod):
            return SUCCESS
        return _REJECT

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        if _tolerates(pod):
            return np.ones(idx.size, bool)
        return ~table.unschedulable[idx]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeTaint)),
                ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.UpdatePodToleration))]
