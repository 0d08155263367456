"""VolumeRestrictions: volumes that two pods may not share (upstream
``plugins/volumerestrictions/volume_restrictions.go``).

Two rules. In-tree disks attach read-write to one node at a time: the same GCE PD, AWS
EBS volume, iSCSI IQN or RBD image on a node conflicts unless every user mounts it
read-only (EBS: always) — "node(s) had no available disk". A ReadWriteOncePod claim may
be used by one pod in the whole cluster: if any scheduled pod uses it, no node fits
("...PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another
pod"); preemption's AddPod/RemovePod keep that count current. PreFilter also rejects a
pod whose claim does not exist (the message upstream shows first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.volumes import Volume
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable, unschedulable
from kubesched.framework.storage import NoStorage, StorageLister
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
                            "access mode already in-use by another pod")
_DISKS = frozenset({"gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"})


@dataclass(slots=True)
class _State:
    rwop_claims: frozenset[str]  # claim names (the pod's namespace) with ReadWriteOncePod
    conflicts: int  # how many of them other pods use

    def clone(self) -> "_State":
        return _State(self.rwop_claims, self.conflicts)

    def conflicts_of(self, other: Pod) -> int:
        return sum(1 for v in other.volumes if v.is_pvc and v.claim_name in self.rwop_claims)


_KEY: StateKey[_State] = StateKey("PreFilter" + names.VOLUME_RESTRICTIONS)


def is_volume_conflict(vol: Volume, other: Pod) -> bool:
    """``isVolumeConflict``: ``vol`` conflicts with one of ``other``'s volumes."""
    for ev in other.volumes:
        if ev.source != vol.source:
            continue
        if vol.source == "gcePersistentDisk" and vol.disk_id == ev.disk_id and not (vol.read_only and ev.read_only):
            return True
        if vol.source == "awsElasticBlockStore" and vol.disk_id == ev.disk_id:
            return True
        if vol.source == "iscsi" and vol.disk_id == ev.disk_id and not (vol.read_only and ev.read_only):
            return True
        if (vol.source == "rbd" and set(vol.monitors) & set(ev.monitors) and vol.pool == ev.pool
                and vol.disk_id == ev.disk_id and not (vol.read_only and ev.read_only)):
            return True
    return False


def satisfies_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    for vol in pod.volumes:
        if vol.source not in _DISKS:
            continue
        for other in node_info.pods:
            if is_volume_conflict(vol, other):
                return False
    return True


class VolumeRestrictions:
    name = names.VOLUME_RESTRICTIONS

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        lister = getattr(handle, "storage", None) if handle is not None else None
        self.lister: StorageLister = lister if lister is not None else NoStorage()

    def _pvc_used(self, key: str) -> bool:
        """``StorageInfos().IsPVCUsedByPods``: some pod in the snapshot uses the claim."""
        snap = getattr(self.handle, "snapshot", None)
        if snap is None:
            return False
        return any(key in ni.pvc_ref_counts for ni in snap.node_infos)

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        needs_check = any(v.source in _DISKS for v in pod.volumes)
        rwop: set[str] = set()
        for vol in pod.volumes:
            if not vol.is_pvc:
                continue
            pvc = self.lister.pvc(pod.namespace, vol.claim_name)
            if pvc is None:
                return None, unresolvable(f'persistentvolumeclaim "{vol.claim_name}" not found')
            if "ReadWriteOncePod" in pvc.access_modes:
                rwop.add(vol.claim_name)
        conflicts = sum(1 for c in rwop if self._pvc_used(f"{pod.namespace}/{c}"))
        if not needs_check and conflicts == 0:
            return None, SKIP
        state.write(_KEY, _State(frozenset(rwop), conflicts))
        return None, SUCCESS

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        s = state.get(_KEY)
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        s.conflicts += s.conflicts_of(pod_to_add)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        s = state.get(_KEY)
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        s.conflicts -= s.conflicts_of(pod_to_remove)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not satisfies_volume_conflicts(pod, node_info):
            return unschedulable(ERR_REASON_DISK_CONFLICT)
        s = state.get(_KEY)
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        if s.conflicts > 0:
            return unschedulable(ERR_REASON_RWOP_CONFLICT)
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        infos = table.infos
        return np.fromiter((self.filter(state, pod, infos[i]).success for i in idx.tolist()),
                           dtype=bool, count=idx.size)

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.Delete), self._after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(Resource.PersistentVolumeClaim, ActionType.Add), _after_pvc_added),
        ]

    def _after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A deleted pod that shared a conflicting disk or one of the pod's claims."""
        deleted = old if isinstance(old, Pod) else None
        if deleted is None:
            return QueueingHint.Queue
        if deleted.namespace == pod.namespace and set(deleted.pvc_names) & set(pod.pvc_names):
            return QueueingHint.Queue
        for vol in pod.volumes:
            if vol.source in _DISKS and is_volume_conflict(vol, deleted):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _after_pvc_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A claim the pod uses was created."""
    if new is None or new.namespace != pod.namespace:
        return QueueingHint.QueueSkip
    return QueueingHint.Queue if any(v.is_pvc and v.claim_name == new.name for v in pod.volumes) \
        else QueueingHint.QueueSkip
