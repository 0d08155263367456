"""Storage helpers shared by the volume plugins and the controllers that emulate a cluster.

Why this exists: upstream keeps these in ``k8s.io/component-helpers/storage/volume``
(``FindMatchingVolume``, ``CheckNodeAffinity``, ``GetBindVolumeToClaim``, ...),
``component-helpers/storage/ephemeral`` (``VolumeIsForPod``) and ``k8s.io/csi-translation-lib``
(in-tree plugin names and their CSI drivers), so that the scheduler's plugins and the PV
controller agree. Plugins never import each other, so what several of them need lives here,
next to the objects.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.storage import (
    ANN_BOUND_BY_CONTROLLER, PersistentVolume, PersistentVolumeClaim,
)
from kubesched.api.volumes import Volume


def check_node_affinity(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """``CheckNodeAffinity``: the PV's required node affinity against a node's labels only
    (the node is built from labels, so a ``matchFields`` term never matches a name)."""
    if pv.node_affinity is None:
        return True
    for term in pv.node_affinity.terms:
        if all(r.matches(labels) for r in term.expressions) and \
                all(r.matches({"metadata.name": ""}) for r in term.fields):
            return True
    return False


def is_volume_bound_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: the claimRef names the claim (and its UID, when set)."""
    ref = pv.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.uid


def check_access_modes(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """``CheckAccessModes``: every mode the claim asks for is one the volume offers."""
    return all(m in pv.access_modes for m in claim.access_modes)


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume],
                         node_labels: Mapping[str, str] | None, excluded: Mapping[str, Any],
                         delay_binding: bool) -> PersistentVolume | None:
    """``FindMatchingVolume``: the PV pre-bound to the claim (None when it does not fit the
    node), else the smallest Available PV of the claim's class that is big enough, has the
    claim's volume mode and access modes, matches its selector and the node."""
    smallest: PersistentVolume | None = None
    requested = claim.request
    want_class = claim.class_name
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not is_volume_bound_to_claim(pv, claim):
            continue
        cap = pv.capacity
        if requested is not None and (cap is None or cap < requested):
            continue
        if claim.volume_mode != pv.volume_mode:
            continue
        if pv.deletion_timestamp is not None:
            continue
        affinity_ok = node_labels is None or check_node_affinity(pv, node_labels)
        if is_volume_bound_to_claim(pv, claim):
            return pv if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if pv.phase != "Available":
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv.storage_class_name != want_class or not affinity_ok:
            continue
        if node_labels is not None and not check_access_modes(claim, pv):
            continue
        if smallest is None or (smallest.capacity is not None and cap is not None and smallest.capacity > cap):
            smallest = pv
    return smallest


def bind_volume_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> tuple[dict[str, Any], bool]:
    """``GetBindVolumeToClaim``: the PV's manifest with ``claimRef`` set to the claim and the
    ``bound-by-controller`` annotation (when it was not bound to it before); and whether
    anything changed."""
    raw = copy.deepcopy(pv.raw)
    dirty = False
    set_by_controller = not is_volume_bound_to_claim(pv, claim)
    ref = pv.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace or ref.uid != claim.uid:
        raw.setdefault("spec", {})["claimRef"] = {
            "kind": "PersistentVolumeClaim", "namespace": claim.namespace, "name": claim.name,
            "uid": claim.uid, "apiVersion": "v1",
            **({"resourceVersion": str(claim.raw["metadata"]["resourceVersion"])}
               if "resourceVersion" in (claim.raw.get("metadata") or {}) else {})}
        dirty = True
    ann = raw.setdefault("metadata", {}).setdefault("annotations", {})
    if set_by_controller and ANN_BOUND_BY_CONTROLLER not in ann:
        ann[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return raw, dirty


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``: None when the pod controls the claim, else the error."""
    if pvc.controller_uid != pod.uid:
        return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} "
                "(pod is not owner)")
    return None


def claim_name(pod: Pod, vol: Volume) -> str:
    """The claim a PVC or generic ephemeral volume uses ("" for other volumes)."""
    return vol.claim_name if vol.is_pvc or vol.is_ephemeral else ""


# -- csi-translation-lib: in-tree plugins that migrate to CSI --------------------------------
# in-tree volume source -> (in-tree plugin name, CSI driver name)
IN_TREE_PLUGINS: dict[str, tuple[str, str]] = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "azureFile": ("kubernetes.io/azure-file", "file.csi.azure.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
}
IN_TREE_TO_CSI: dict[str, str] = dict(IN_TREE_PLUGINS.values())
# Plugins whose migration is on without the CSINode's migrated-plugins annotation (v1.34,
# nodevolumelimits ``isCSIMigrationOn``); Portworx also needs the annotation.
MIGRATION_ALWAYS_ON = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                                 "kubernetes.io/cinder"})


def translated_volume_handle(source: str, disk_id: str) -> str:
    """The CSI volume handle an inline in-tree volume translates to (csi-translation-lib):
    EBS strips an ``aws://zone/`` prefix, GCE PD names the disk with unspecified project and
    zone; the others keep their id."""
    if source == "awsElasticBlockStore":
        if disk_id.startswith("aws://"):
            return disk_id.rsplit("/", 1)[-1]
        return disk_id
    if source == "gcePersistentDisk":
        return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{disk_id}"
    return disk_id
