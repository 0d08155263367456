"""VolumeZone: a pod's bound volumes must be in the node's zone and region (upstream
``plugins/volumezone/volume_zone.go``).

PreFilter collects the zone/region labels of the PVs the pod's claims are bound to (GA
and beta keys, ``a__b`` meaning several zones); unbound WaitForFirstConsumer claims are
skipped (VolumeBinding handles them). Filter passes nodes without any zone/region label
and otherwise wants each PV label's value on the node (a beta PV label may be matched by
the node's GA label). Missing claims, classes and PVs reject the pod at PreFilter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.storage import BINDING_WAIT, PersistentVolume
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable
from kubesched.framework.storage import NoStorage, StorageLister
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names

ERR_REASON_CONFLICT = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_TO_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}


@dataclass(frozen=True, slots=True)
class _Topology:
    pv_name: str
    key: str
    values: frozenset[str]


@dataclass(frozen=True, slots=True)
class _State:
    topologies: tuple[_Topology, ...]

    def clone(self) -> "_State":
        return self


_KEY: StateKey[_State] = StateKey("PreFilter" + names.VOLUME_ZONE)


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: ``a__b`` is zones a and b; an empty zone is an error (None)."""
    parts = value.split("__")
    if any(p.strip() == "" for p in parts):
        return None
    return frozenset(p.strip() for p in parts)


def pv_topologies(pv: PersistentVolume) -> list[_Topology]:
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            out.append(_Topology(pv.name, key, zones))
    return out


class VolumeZone:
    name = names.VOLUME_ZONE

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        lister = getattr(handle, "storage", None) if handle is not None else None
        self.lister: StorageLister = lister if lister is not None else NoStorage()

    def _topologies(self, pod: Pod) -> list[_Topology] | Status:
        """``getPVbyPod``."""
        out: list[_Topology] = []
        for vol in pod.volumes:
            if not (vol.is_pvc or vol.is_ephemeral):
                continue
            if not vol.claim_name:
                return unresolvable("PersistentVolumeClaim had no name")
            pvc = self.lister.pvc(pod.namespace, vol.claim_name)
            if pvc is None:
                return unresolvable(f'persistentvolumeclaim "{vol.claim_name}" not found')
            if not pvc.volume_name:
                sc_name = pvc.class_name
                if not sc_name:
                    return unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = self.lister.storage_class(sc_name)
                if sc is None:
                    return unresolvable(f'storageclass.storage.k8s.io "{sc_name}" not found')
                if sc.volume_binding_mode == BINDING_WAIT:
                    continue
                return unresolvable("PersistentVolume had no name")
            pv = self.lister.pv(pvc.volume_name)
            if pv is None:
                return unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            out.extend(pv_topologies(pv))
        return out

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        tops = self._topologies(pod)
        if isinstance(tops, Status):
            return None, tops
        if not tops:
            return None, SKIP
        state.write(_KEY, _State(tuple(tops)))
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return SUCCESS
        s = state.get(_KEY)
        if s is None:
            tops = self._topologies(pod)
            if isinstance(tops, Status):
                return tops
            topologies: Sequence[_Topology] = tops
        else:
            topologies = s.topologies
        node = node_info.node
        if node is None:
            return error("node not found")
        labels = node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return SUCCESS
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(_TO_GA.get(t.key, t.key))
            if v is None or v not in t.values:
                return unresolvable(ERR_REASON_CONFLICT)
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        infos = table.infos
        return np.fromiter((self.filter(state, pod, infos[i]).success for i in idx.tolist()),
                           dtype=bool, count=idx.size)

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.StorageClass, ActionType.Add), _after_storage_class_added),
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(ClusterEvent(Resource.PersistentVolumeClaim, ActionType.Add | ActionType.Update),
                                 _after_pvc_change),
            ClusterEventWithHint(ClusterEvent(Resource.PersistentVolume, ActionType.Add | ActionType.Update),
                                 _after_pv_change),
        ]


def _after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or new.namespace != pod.namespace:
        return QueueingHint.QueueSkip
    return QueueingHint.Queue if new.name in pod.pvc_names else QueueingHint.QueueSkip


def _after_storage_class_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A new WaitForFirstConsumer class may let the pod skip an unbound claim."""
    if new is None or new.volume_binding_mode == BINDING_WAIT:
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _after_pv_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A new PV, or a change of a PV's zone/region labels."""
    if old is None or new is None:
        return QueueingHint.Queue
    if any(old.labels.get(k) != new.labels.get(k) for k in TOPOLOGY_LABELS):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip
