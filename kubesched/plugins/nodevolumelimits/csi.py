"""NodeVolumeLimits: a node's CSI drivers attach at most ``allocatable.count`` volumes
(upstream ``plugins/nodevolumelimits/csi.go``).

Each pod volume that attaches through a CSI driver is identified as ``driver/handle``:
claims through their bound PV (a CSI PV, or an in-tree PV whose plugin is migrated to CSI)
or, unbound, through their class's provisioner with a per-claim handle; inline in-tree
disks (EBS, GCE PD, Azure Disk, Cinder) through their CSI translation. The volumes of the
node's pods and those its VolumeAttachments hold are counted once each; the pod's new ones must fit each driver's limit in the
node's CSINode ("node(s) exceed max volume count", Unschedulable: preemption may help).

With VolumeLimitScaling (on from 1.37), a new volume whose CSIDriver sets
``preventPodSchedulingIfMissing`` needs its driver in the node's CSINode: a node without
it (or without a CSINode) is refused, "<driver> CSI driver is not installed on the node"
(kubernetes/kubernetes#135012).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.storage import ANN_MIGRATED_PLUGINS, CSINode, PersistentVolumeClaim
from kubesched.api.storagehelpers import (
    IN_TREE_PLUGINS, IN_TREE_TO_CSI, MIGRATION_ALWAYS_ON, translated_volume_handle, volume_is_for_pod,
)
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.features import features_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable, unschedulable
from kubesched.framework.storage import NoStorage, StorageLister
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.nodevolumelimits.columns import VolumeColumns

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
ERR_REASON_DRIVER_NOT_INSTALLED = "{driver} CSI driver is not installed on the node"
_UNBOUND_PREFIX = "kubesched-unbound"  # upstream: a random prefix that no real volume handle has
_INLINE_MIGRATABLE = frozenset({"awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "cinder",
                                "portworxVolume", "vsphereVolume", "azureFile"})


class _NotFound(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _State:
    new_volumes: dict[str, str] | None  # see CSILimits._node_independent
    problem: Status | None = None  # the pod's own volumes cannot be resolved (on any node)

    def clone(self) -> "_State":
        return self


_KEY: StateKey[_State] = StateKey("PreFilter" + names.NODE_VOLUME_LIMITS)


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """``isCSIMigrationOn`` (v1.34): needs a CSINode; EBS, GCE PD, Azure Disk and Cinder are
    always migrated; Portworx only when the CSINode lists it as migrated; others never."""
    if csi_node is None or not plugin:
        return False
    if plugin in MIGRATION_ALWAYS_ON:
        return True
    if plugin != "kubernetes.io/portworx-volume":
        return False
    return plugin in csi_node.annotations.get(ANN_MIGRATED_PLUGINS, "").split(",")


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    if csi_node is None:
        return {}
    return {d.name: d.allocatable_count for d in csi_node.drivers if d.allocatable_count is not None}


class CSILimits:
    name = names.NODE_VOLUME_LIMITS

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        lister = getattr(handle, "storage", None) if handle is not None else None
        self.lister: StorageLister = lister if lister is not None else NoStorage()
        # Memo of an existing pod's attached volumes per (pod uid, CSINode), valid while the
        # lister's optional ``version`` is unchanged (listers without one are not memoised).
        self._memo: dict[tuple[str, int], dict[str, str]] = {}
        self._memo_version: Any = None
        self._limits: dict[int, tuple[CSINode, dict[str, int]]] = {}
        self._per_node: dict[str, tuple[Any, CSINode | None, dict[str, str]]] = {}
        self._columns = VolumeColumns()
        self._va_index: dict[str, dict[str, str]] = {}
        self._va_version: Any = None
        self.volume_limit_scaling = features_of(handle).enabled("VolumeLimitScaling")

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        for vol in pod.volumes:
            if vol.is_pvc or vol.is_ephemeral or vol.source in _INLINE_MIGRATABLE:
                state.write(_KEY, _State(self._node_independent(pod), self._problem(pod)))
                return None, SUCCESS
        return None, SKIP

    def _problem(self, pod: Pod) -> Status | None:
        """What Filter would report for the pod's own volumes on every node (a missing claim,
        an ephemeral claim the pod does not own): these do not depend on the CSINode."""
        try:
            self._attachable(pod, None, True, {})
        except _NotFound as exc:
            return unresolvable(str(exc))
        except ValueError as exc:
            return error(str(exc))
        return None

    def _node_independent(self, pod: Pod) -> dict[str, str] | None:
        """The pod's new volumes when no node's CSINode can change them (claims bound to CSI
        PVs, or unbound with a CSI provisioner; no in-tree disks): computed once per cycle.
        None when they depend on the node (or cannot be resolved: Filter reports that)."""
        out: dict[str, str] = {}
        for vol in pod.volumes:
            if not (vol.is_pvc or vol.is_ephemeral):
                if vol.source in IN_TREE_PLUGINS:
                    return None
                continue
            pvc = self.lister.pvc(pod.namespace, vol.claim_name) if vol.claim_name else None
            if pvc is None or (vol.is_ephemeral and volume_is_for_pod(pod, pvc)):
                return None
            pv = self.lister.pv(pvc.volume_name) if pvc.volume_name else None
            if pv is not None:
                if pv.source != "csi":
                    return None
            else:
                sc = self.lister.storage_class(pvc.class_name) if pvc.class_name else None
                if sc is not None and sc.provisioner in IN_TREE_TO_CSI:
                    return None
            driver, handle = self._driver_info(None, pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        return out

    def _node_attached(self, node_info: NodeInfo, csi_node: CSINode | None) -> dict[str, str]:
        """Volumes attached for the node's pods, memoised per node while neither its pods
        (generation), its CSINode nor storage (the lister's ``version``) changed."""
        version = getattr(self.lister, "version", None)
        key = (node_info.generation, id(csi_node), version)
        hit = self._per_node.get(node_info.name)
        if version is not None and hit is not None and hit[0] == key and hit[1] is csi_node:
            return hit[2]
        attached: dict[str, str] = {}
        for other in node_info.pods:
            if other.volumes:
                self._attached(other, csi_node, attached)
        for unique, driver in self._attachments(node_info.name, version).items():
            attached.setdefault(unique, driver)  # counted once, with the pods' volumes
        if version is not None:
            self._per_node[node_info.name] = (key, csi_node, attached)
        return attached

    def _attachments(self, node_name: str, version: Any) -> dict[str, str]:
        """``getNodeVolumeAttachmentInfo``: volumes the attach/detach controller has attached
        to the node (VolumeAttachments of a CSI PV), as ``attacher/handle`` -> attacher."""
        if version is None or version != self._va_version:
            index: dict[str, dict[str, str]] = {}
            for va in self.lister.volume_attachments():
                pv = self.lister.pv(va.pv_name) if va.attacher and va.pv_name else None
                if pv is not None and pv.source == "csi":
                    index.setdefault(va.node_name, {})[f"{va.attacher}/{pv.volume_handle}"] = va.attacher
            self._va_index, self._va_version = index, version
        return self._va_index.get(node_name, {})

    # -- which volumes attach ----------------------------------------------------------
    def _attachable(self, pod: Pod, csi_node: CSINode | None, new_pod: bool, out: dict[str, str]) -> None:
        """``filterAttachableVolumes``: ``out[driver/handle] = driver`` for the pod's volumes."""
        for vol in pod.volumes:
            if not (vol.is_pvc or vol.is_ephemeral):
                self._inline(vol.source, vol.disk_id, csi_node, out)
                continue
            if not vol.claim_name:
                raise ValueError("PersistentVolumeClaim had no name")
            pvc = self.lister.pvc(pod.namespace, vol.claim_name)
            if pvc is None:
                if new_pod:
                    raise _NotFound(f"looking up PVC {pod.namespace}/{vol.claim_name}: "
                                    f'persistentvolumeclaim "{vol.claim_name}" not found')
                continue
            if vol.is_ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err:
                    raise ValueError(err)
            driver, handle = self._driver_info(csi_node, pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver

    def _inline(self, source: str, disk_id: str, csi_node: CSINode | None, out: dict[str, str]) -> None:
        """``checkAttachableInlineVolume``: an inline in-tree disk counts under its CSI
        driver when its plugin is migrated on the node."""
        plugin = IN_TREE_PLUGINS.get(source)
        if plugin is None or source not in _INLINE_MIGRATABLE:
            return
        if not is_csi_migration_on(csi_node, plugin[0]):
            return
        out[f"{plugin[1]}/{translated_volume_handle(source, disk_id)}"] = plugin[1]

    def _driver_info(self, csi_node: CSINode | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """``getCSIDriverInfo``: the bound PV's CSI driver and handle (translated for a
        migrated in-tree PV); an unbound claim goes by its class (``getCSIDriverInfoFromSC``)."""
        if pvc.volume_name:
            pv = self.lister.pv(pvc.volume_name)
            if pv is not None:
                if pv.source == "csi":
                    return pv.csi_driver, pv.volume_handle
                plugin = IN_TREE_PLUGINS.get(pv.source)
                if plugin is None or not is_csi_migration_on(csi_node, plugin[0]):
                    return "", ""
                return plugin[1], translated_volume_handle(pv.source, pv.disk_id)
        sc_name = pvc.class_name
        if not sc_name:
            return "", ""
        sc = self.lister.storage_class(sc_name)
        if sc is None:
            return "", ""
        handle = f"{_UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"
        if sc.provisioner in IN_TREE_TO_CSI:
            if not is_csi_migration_on(csi_node, sc.provisioner):
                return "", ""
            return IN_TREE_TO_CSI[sc.provisioner], handle
        return sc.provisioner, handle

    def _limits_of(self, csi_node: CSINode | None) -> dict[str, int]:
        if csi_node is None:
            return {}
        hit = self._limits.get(id(csi_node))
        if hit is None or hit[0] is not csi_node:
            if len(self._limits) > 100_000:
                self._limits.clear()
            hit = self._limits[id(csi_node)] = (csi_node, volume_limits(csi_node))
        return hit[1]

    def _attached(self, pod: Pod, csi_node: CSINode | None, out: dict[str, str]) -> None:
        """An existing pod's attached volumes into ``out``, memoised while storage is unchanged."""
        version = getattr(self.lister, "version", None)
        if version is None:
            self._attachable(pod, csi_node, False, out)
            return
        if version != self._memo_version or len(self._memo) > 200_000:
            self._memo.clear()
            self._memo_version = version
        key = (pod.uid, id(csi_node))
        vols = self._memo.get(key)
        if vols is None:
            vols = {}
            self._attachable(pod, csi_node, False, vols)
            self._memo[key] = vols
        out.update(vols)

    # -- Filter ------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return SUCCESS
        node = node_info.node
        if node is None:
            return error("node not found")
        csi_node = self.lister.csi_node(node.name)
        s = state.get(_KEY)
        if s is not None and csi_node is None and (s.problem or not self.volume_limit_scaling):
            return s.problem or SUCCESS  # no CSINode: no limits (and no migration)
        fixed = s.new_volumes if s is not None else None
        if fixed is not None:
            new = dict(fixed)
        else:
            new = {}
            try:
                self._attachable(pod, csi_node, True, new)
            except _NotFound as exc:
                return unresolvable(str(exc))
            except ValueError as exc:
                return error(str(exc))
        if not new:
            return SUCCESS
        if self.volume_limit_scaling:
            for driver in new.values():
                if not self._driver_on_node(driver, csi_node):
                    return unschedulable(ERR_REASON_DRIVER_NOT_INSTALLED.format(driver=driver))
        limits = self._limits_of(csi_node)
        if not limits or not any(d in limits for d in new.values()):
            return SUCCESS  # only drivers with a limit are ever compared (upstream's last loop)
        try:
            attached = self._node_attached(node_info, csi_node)
        except (ValueError, _NotFound) as exc:
            return error(str(exc))
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)  # a volume already attached for another pod counts once
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return SUCCESS

    def _driver_on_node(self, driver: str, csi_node: CSINode | None) -> bool:
        """``checkCSIDriverOnNode``: only a CSIDriver that sets preventPodSchedulingIfMissing
        requires its driver in the node's CSINode."""
        csi_driver = self.lister.csi_driver(driver)
        if csi_driver is None or not csi_driver.prevent_pod_scheduling_if_missing:
            return True
        return csi_node is not None and csi_node.driver(driver) is not None

    def _needs_driver_check(self, s: _State) -> bool:
        """Whether a node's installed drivers can decide this pod (the batch columns do not
        know them): some new volume's driver requires being installed, or the new volumes
        depend on the node."""
        if not self.volume_limit_scaling:
            return False
        if s.new_volumes is None:
            return True
        return any(not self._driver_on_node(d, None) for d in set(s.new_volumes.values()))

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        """Batch form: when the pod's new volumes do not depend on the node, the limits and
        attached counts come from per-node columns (:mod:`.columns`); other pods, and rows
        the columns cannot decide, take the per-node check."""
        infos = table.infos
        s = state.get(_KEY)
        version = getattr(self.lister, "version", None)
        if (s is None or version is None or (s.new_volumes is None and s.problem is not None)
                or self._needs_driver_check(s)):
            return np.fromiter((self.filter(state, pod, infos[i]).success for i in idx.tolist()),
                               dtype=bool, count=idx.size)
        if s.new_volumes is not None and not s.new_volumes:
            return np.ones(idx.size, dtype=bool)
        self._columns.refresh(table, version, self.lister.csi_node, self._node_attached, self._limits_of)
        if s.new_volumes is None:  # node-dependent (in-tree) volumes: only limited rows can fail
            free: np.ndarray = ~self._columns.limited[idx]
            for j in np.nonzero(~free)[0].tolist():
                free[j] = self.filter(state, pod, infos[int(idx[j])]).success
            return free
        ok, exact = self._columns.fits(idx, s.new_volumes)
        for j in exact:
            ok[j] = self.filter(state, pod, infos[int(idx[j])]).success
        return ok

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.CSINode, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(Resource.CSINode, ActionType.Update),
                                 _after_csinode_updated_with_drivers if self.volume_limit_scaling
                                 else _after_csinode_updated),
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.Delete), _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(Resource.PersistentVolumeClaim, ActionType.Add), _after_pvc_added),
            ClusterEventWithHint(ClusterEvent(Resource.VolumeAttachment, ActionType.Delete)),
        ]


def _after_pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A deleted pod frees attach slots only if it had volumes and was on a node."""
    deleted = old if isinstance(old, Pod) else None
    if deleted is None or (deleted.node_name and deleted.volumes):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _after_csinode_updated(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A driver's ``allocatable.count`` grew (a driver without one counts as 0 before)."""
    if old is None or new is None:
        return QueueingHint.Queue
    before = {d.name: d.allocatable_count or 0 for d in old.drivers}
    for d in new.drivers:
        if d.allocatable_count is not None and d.allocatable_count > before.get(d.name, 0):
            return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _after_csinode_updated_with_drivers(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """With VolumeLimitScaling a driver newly installed on the node can also help."""
    if old is not None and new is not None and {d.name for d in new.drivers} - {d.name for d in old.drivers}:
        return QueueingHint.Queue
    return _after_csinode_updated(pod, old, new)


def _after_pvc_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or new.namespace != pod.namespace:
        return QueueingHint.QueueSkip
    return QueueingHint.Queue if new.name in pod.pvc_names else QueueingHint.QueueSkip
