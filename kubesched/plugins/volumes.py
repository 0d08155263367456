"""The volume plugins of the default profile, for pods without volumes.

kubesched does not schedule volumes yet: the decoder rejects pods that use
PersistentVolumeClaims or generic ephemeral volumes with a clear error, so every pod that
reaches these plugins has no claim. For such pods upstream's VolumeRestrictions,
NodeVolumeLimits, VolumeBinding and VolumeZone skip themselves in PreFilter (and
VolumeBinding in PreScore), which is exactly what these do. They exist so the default
profile and user configurations that name them (enable, disable, weights) behave as
upstream's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.status import SKIP, SUCCESS, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names


class _VolumeFilter:
    name = ""

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return None, SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS


class VolumeRestrictions(_VolumeFilter):
    name = names.VOLUME_RESTRICTIONS


class NodeVolumeLimits(_VolumeFilter):
    name = names.NODE_VOLUME_LIMITS


class VolumeZone(_VolumeFilter):
    name = names.VOLUME_ZONE


class VolumeBinding(_VolumeFilter):
    name = names.VOLUME_BINDING

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return SKIP

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SKIP
