"""NodeVolumeLimits: a node's CSI drivers attach at most ``allocatable.count`` volumes
(upstream ``plugins/nodevolumelimits/csi.go``).

Each pod volume that attaches through a CSI driver is identified as ``driver/handle``:
claims through their bound PV (a CSI PV, or an in-tree PV whose plugin is migrated to CSI)
or, unbound, through their class's provisioner with a per-claim handle; inline in-tree
disks (EBS, GCE PD, Azure Disk, Cinder) through their CSI translation. The volumes of the
node's pods are counted once each; the pod's new ones must fit each driver's limit in the
node's CSINode ("node(s) exceed max volume count", Unschedulable: preemption may help).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.storage import ANN_MIGRATED_PLUGINS, CSINode, PersistentVolumeClaim
from kubesched.api.storagehelpers import (
    IN_TREE_PLUGINS, IN_TREE_TO_CSI, MIGRATION_ALWAYS_ON, translated_volume_handle, volume_is_for_pod,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable, unschedulable
from kubesched.framework.storage import NoStorage, StorageLister
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
_UNBOUND_PREFIX = "kubesched-unbound"  # upstream: a random prefix that no real volume handle has
_INLINE_MIGRATABLE = frozenset({"awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "cinder",
                                "portworxVolume", "vsphereVolume", "azureFile"})


class _NotFound(Exception):
    pass


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

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        for vol in pod.volumes:
            if vol.is_pvc or vol.is_ephemeral or vol.source in _INLINE_MIGRATABLE:
                return None, SUCCESS
        return None, SKIP

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

    # -- Filter ------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return SUCCESS
        node = node_info.node
        if node is None:
            return error("node not found")
        csi_node = self.lister.csi_node(node.name)
        new: dict[str, str] = {}
        try:
            self._attachable(pod, csi_node, True, new)
        except _NotFound as exc:
            return unresolvable(str(exc))
        except ValueError as exc:
            return error(str(exc))
        if not new:
            return SUCCESS
        limits = volume_limits(csi_node)
        if not limits:
            return SUCCESS
        attached: dict[str, str] = {}
        try:
            for other in node_info.pods:
                self._attachable(other, csi_node, False, attached)
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

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        infos = table.infos
        return np.fromiter((self.filter(state, pod, infos[i]).success for i in idx.tolist()),
                           dtype=bool, count=idx.size)

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.CSINode, ActionType.Add | ActionType.Update)),
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


def _after_pvc_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or new.namespace != pod.namespace:
        return QueueingHint.QueueSkip
    return QueueingHint.Queue if new.name in pod.pvc_names else QueueingHint.QueueSkip
