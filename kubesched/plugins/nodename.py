"""NodeName: a pod with ``spec.nodeName`` fits only that node (upstream ``nodename``)."""

from __future__ import annotations

from collections.abc import Hashable

from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names

ERR_REASON = "node(s) didn't match the requested node name"
_REJECT = unresolvable(ERR_REASON)


class NodeName:
    name = names.NODE_NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same spec.nodeName get the same results on a node (NodeLocalPlugin)."""
        return pod.node_name

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.node_name or pod.node_name == node_info.name:
            return SUCCESS
        return _REJECT

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        if not pod.node_name:
            return np.ones(idx.size, bool)
        i = table.index.get(pod.node_name, -1)
        return idx == i

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add))]
