"""DynamicResources, as it acts on pods without resource claims (upstream
``plugins/dynamicresources``, in the v1.34 default profile).

kubesched does not schedule DRA claims yet (manifests with ``resourceClaims`` are rejected
at decode), but upstream's default profile runs this plugin on every pod, and one of its
effects is visible without any claim: its PostFilter runs before DefaultPreemption and
reads the state its PreFilter wrote. When an earlier PreFilter plugin rejected the pod as
UnschedulableAndUnresolvable (a missing PVC, an unbound Immediate claim), the PreFilter
phase stopped before this plugin, the read fails, and the PostFilter phase ends with that
error: the message ends in ``not found`` and no preemption is tried. Otherwise its
PostFilter is Unschedulable ("no new claims to deallocate") and preemption runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interface import PostFilterResult, PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Code, Status, error
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names


@dataclass(frozen=True, slots=True)
class _State:
    """Written by PreFilter (a pod without claims has nothing else to remember)."""

    def clone(self) -> "_State":
        return self


_KEY: StateKey[_State] = StateKey(names.DYNAMIC_RESOURCES)


class DynamicResources:
    name = names.DYNAMIC_RESOURCES

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        state.write(_KEY, _State())
        return None, SKIP  # no claims: Filter is skipped

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        return np.ones(idx.size, dtype=bool)

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        if state.get(_KEY) is None:
            return None, error("not found")
        return None, Status(Code.Unschedulable)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SKIP

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []  # ResourceClaim/ResourceSlice/DeviceClass events: kubesched has none of these objects
