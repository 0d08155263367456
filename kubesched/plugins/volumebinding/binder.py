"""The volume binder behind the VolumeBinding plugin (upstream ``volumebinding/binder.go``).

What a pod's claims need on a node: bound claims need their PV's node affinity to match;
unbound WaitForFirstConsumer claims need either a matching Available PV (static binding,
smallest first) or a class that can provision there (allowed topologies, and enough
CSIStorageCapacity when the driver opts in). Reserve assumes the chosen bindings; PreBind
writes them (PV ``claimRef``, PVC ``selected-node``) and waits for the PV controller.
Expected failures are reasons; anything else raises :class:`BinderError`, which the plugin
turns into an ``Error`` status.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kubesched.api.objects import Node, Pod
from kubesched.api.storage import (
    ANN_BIND_COMPLETED, ANN_SELECTED_NODE, BINDING_WAIT, NO_PROVISIONER, PersistentVolume, PersistentVolumeClaim,
    CSIStorageCapacity, StorageClass,
)
from kubesched.api.storagehelpers import (
    bind_volume_to_claim, check_node_affinity, find_matching_volume, volume_is_for_pod,
)
from kubesched.framework.storage import StorageLister, StorageWriteError, StorageWriter
from kubesched.plugins.volumebinding.assumecache import AssumeCache, newer_than

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BinderError(Exception):
    """Something other than an expected misfit (upstream returns it as an error)."""


@dataclass(slots=True)
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_delay: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    pvs_by_class: dict[str, list[PersistentVolume]] = field(default_factory=dict)


@dataclass(slots=True)
class PodVolumes:
    """What the pod's claims need on one node: PVs to bind, claims to provision."""

    static_bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = field(default_factory=list)
    dynamic_provisions: list[PersistentVolumeClaim] = field(default_factory=list)
    # per claim key to provision: the CSIStorageCapacity that holds it (upstream
    # DynamicProvision.NodeCapacity; absent when the driver does not track capacity)
    node_capacity: dict[str, CSIStorageCapacity] = field(default_factory=dict)


def is_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.volume_name) and ANN_BIND_COMPLETED in pvc.annotations


class VolumeBinder:
    def __init__(self, lister: StorageLister, cache: AssumeCache, bind_timeout: float) -> None:
        self.lister = lister
        self.cache = cache
        self.bind_timeout = bind_timeout

    # -- PreFilter ---------------------------------------------------------------------
    def _is_delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        name = pvc.class_name
        if not name:
            return False
        sc = self.lister.storage_class(name)
        return sc is not None and sc.volume_binding_mode == BINDING_WAIT

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """``GetPodVolumeClaims``: the pod's claims split into bound, unbound delayed and
        unbound immediate (a claim pre-bound by ``volumeName`` counts as immediate)."""
        out = PodVolumeClaims()
        for vol in pod.volumes:
            if not (vol.is_pvc or vol.is_ephemeral):
                continue
            pvc = self.cache.get_pvc(pod.namespace, vol.claim_name)
            if pvc is None:
                raise BinderError(f'error getting PVC "{pod.namespace}/{vol.claim_name}": '
                                  f'persistentvolumeclaim "{vol.claim_name}" not found')
            if vol.is_ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err:
                    raise BinderError(err)
            if is_fully_bound(pvc):
                out.bound.append(pvc)
            elif self._is_delay_binding(pvc) and not pvc.volume_name:
                out.unbound_delay.append(pvc)
            else:
                out.unbound_immediate.append(pvc)
        for pvc in out.unbound_delay:
            cls = pvc.class_name
            if cls not in out.pvs_by_class:
                out.pvs_by_class[cls] = self.cache.list_pvs(cls)
        return out

    # -- Filter ------------------------------------------------------------------------
    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """``FindPodVolumes``: the pod's volumes on ``node`` and the reasons it does not fit
        (in upstream's order: node affinity, bind conflict, space, missing PV)."""
        pv_found, bound_ok, unbound_ok, space_ok = True, True, True, True
        volumes = PodVolumes()
        if claims.bound:
            bound_ok, pv_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay:
            to_provision: list[PersistentVolumeClaim] = []
            to_match: list[PersistentVolumeClaim] = []
            for pvc in claims.unbound_delay:
                selected = pvc.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.name:
                        return volumes, _reasons(bound_ok, False, True, pv_found)
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if to_match:
                unbound_ok, volumes.static_bindings, rest = self._find_matching(claims, to_match, node)
                to_provision.extend(rest)
            if to_provision:
                unbound_ok, space_ok, volumes.dynamic_provisions = self._check_provisions(
                    to_provision, node, volumes.node_capacity)
        return volumes, _reasons(bound_ok, unbound_ok, space_ok, pv_found)

    def _check_bound_claims(self, claims: list[PersistentVolumeClaim], node: Node) -> tuple[bool, bool]:
        for pvc in claims:
            pv = self.cache.get_pv(pvc.volume_name)
            if pv is None:
                return True, False
            if not check_node_affinity(pv, node.labels):
                return False, True
        return True, True

    def _find_matching(self, claims: PodVolumeClaims, to_bind: list[PersistentVolumeClaim], node: Node,
                       ) -> tuple[bool, list[tuple[PersistentVolume, PersistentVolumeClaim]], list[PersistentVolumeClaim]]:
        chosen: dict[str, PersistentVolume] = {}
        bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = []
        unbound: list[PersistentVolumeClaim] = []
        found = True
        # smallest request first (claims without a request count as zero)
        for pvc in sorted(to_bind, key=lambda c: c.request.amount if c.request is not None else 0):
            pvs = claims.pvs_by_class.get(pvc.class_name, [])
            pv = find_matching_volume(pvc, pvs, node.labels, chosen, True)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen[pv.name] = pv
            bindings.append((pv, pvc))
        return found, bindings, unbound

    def _check_provisions(self, to_provision: list[PersistentVolumeClaim], node: Node,
                          capacities: dict[str, CSIStorageCapacity],
                          ) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
        out = []
        for pvc in to_provision:
            cls_name = pvc.class_name
            if not cls_name:
                raise BinderError(f'no class for claim "{pvc.key}"')
            sc = self.lister.storage_class(cls_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{cls_name}"')
            if not sc.provisioner or sc.provisioner == NO_PROVISIONER:
                return False, True, []
            if sc.allowed_topologies and not any(t.matches(node.labels) for t in sc.allowed_topologies):
                return False, True, []
            enough, capacity = self._has_enough_capacity(pvc, sc, node)
            if not enough:
                return True, False, []
            if capacity is not None:
                capacities[pvc.key] = capacity
            out.append(pvc)
        return True, True, out

    def _has_enough_capacity(self, pvc: PersistentVolumeClaim, sc: StorageClass, node: Node,
                             ) -> tuple[bool, CSIStorageCapacity | None]:
        """``hasEnoughCapacity``: only for CSI drivers with ``storageCapacity: true``; some
        CSIStorageCapacity of the class, visible from the node, must hold the request (the
        first that does is returned, for VolumeBinding's capacity score)."""
        if pvc.request is None:
            return True, None
        driver = self.lister.csi_driver(sc.provisioner)
        if driver is None or not driver.storage_capacity:
            return True, None
        size = pvc.request.value()
        for cap in self.lister.csi_storage_capacities():
            if cap.storage_class_name != sc.name:
                continue
            limit = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
            if limit is None or limit.value() < size:
                continue
            if cap.node_topology is not None and cap.node_topology.matches(node.labels):
                return True, cap
        return False, None

    # -- Reserve / Unreserve -------------------------------------------------------------
    def assume(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """``AssumePodVolumes``: True when every claim is already fully bound. Otherwise the
        bindings and provisionings become the assumed PV/PVC versions, and ``volumes`` is
        rewritten to hold them (what PreBind will write)."""
        if self.all_bound(pod):
            return True
        bindings = []
        for pv, pvc in volumes.static_bindings:
            raw, dirty = bind_volume_to_claim(pv, pvc)
            new_pv = PersistentVolume.from_dict(raw, validate=False) if dirty else pv
            if dirty:
                self.cache.assume_pv(new_pv)
            bindings.append((new_pv, pvc))
        provisions = []
        for pvc in volumes.dynamic_provisions:
            raw = copy.deepcopy(pvc.raw)
            raw.setdefault("metadata", {}).setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
            new_pvc = PersistentVolumeClaim.from_dict(raw, validate=False)
            self.cache.assume_pvc(new_pvc)
            provisions.append(new_pvc)
        volumes.static_bindings, volumes.dynamic_provisions = bindings, provisions
        return False

    def revert(self, volumes: PodVolumes) -> None:
        self.cache.restore_pvs([pv.name for pv, _ in volumes.static_bindings])
        self.cache.restore_pvcs([pvc.key for pvc in volumes.dynamic_provisions])

    def all_bound(self, pod: Pod) -> bool:
        for vol in pod.volumes:
            if vol.is_pvc or vol.is_ephemeral:
                pvc = self.cache.get_pvc(pod.namespace, vol.claim_name)
                if pvc is None or not is_fully_bound(pvc) or (vol.is_ephemeral and volume_is_for_pod(pod, pvc)):
                    return False
        return True

    # -- PreBind -------------------------------------------------------------------------
    def bind(self, pod: Pod, node: Node, volumes: PodVolumes, writer: StorageWriter) -> None:
        """``BindPodVolumes``: write the bindings and provisionings, then wait (polling every
        second, up to the bind timeout) until the PV controller has bound every claim."""
        done_pv = done_pvc = 0
        try:
            for i, (pv, pvc) in enumerate(volumes.static_bindings):
                volumes.static_bindings[i] = (writer.update_pv(pv.raw), pvc)
                done_pv += 1
            for i, pvc in enumerate(volumes.dynamic_provisions):
                volumes.dynamic_provisions[i] = writer.update_pvc(pvc.raw)
                done_pvc += 1
        except StorageWriteError as exc:
            self.cache.restore_pvs([pv.name for pv, _ in volumes.static_bindings[done_pv:]])
            self.cache.restore_pvcs([c.key for c in volumes.dynamic_provisions[done_pvc:]])
            raise BinderError(str(exc)) from None
        if not writer.wait_for(lambda: self._check_bindings(node, volumes), self.bind_timeout, 1.0):
            raise BinderError("binding volumes: context deadline exceeded")

    def _check_bindings(self, node: Node, volumes: PodVolumes) -> bool:
        """``checkBindings`` on the API's objects (the lister, not the assumed views)."""
        for pv_written, pvc_written in volumes.static_bindings:
            pv = self.lister.pv(pv_written.name)
            pvc = self.lister.pvc(pvc_written.namespace, pvc_written.name)
            if pv is None or pvc is None:
                raise BinderError(f"binding volumes: failed to check binding: "
                                  f"{'PV ' + pv_written.name if pv is None else 'PVC ' + pvc_written.key} not found")
            if newer_than(pv_written, pv):
                return False
            if not check_node_affinity(pv, node.labels):
                raise BinderError(f'binding volumes: pv "{pv.name}" node affinity doesn\'t match node '
                                  f'"{node.name}": no matching NodeSelectorTerms')
            if pv.claim_ref is None or not pv.claim_ref.uid:
                raise BinderError(f'binding volumes: ClaimRef got reset for pv "{pv.name}"')
            if not is_fully_bound(pvc):
                return False
        for written in volumes.dynamic_provisions:
            pvc = self.lister.pvc(written.namespace, written.name)
            if pvc is None:
                raise BinderError(f"binding volumes: failed to check provisioning pvc: {written.key} not found")
            if newer_than(written, pvc):
                return False
            if pvc.annotations.get(ANN_SELECTED_NODE) != node.name:
                raise BinderError(f'binding volumes: provisioning failed for PVC "{pvc.name}"')
            if pvc.volume_name:
                pv = self.lister.pv(pvc.volume_name)
                if pv is None:
                    return False
                if not check_node_affinity(pv, node.labels):
                    raise BinderError(f'binding volumes: pv "{pv.name}" node affinity doesn\'t match node '
                                      f'"{node.name}": no matching NodeSelectorTerms')
            if not is_fully_bound(pvc):
                return False
        return True


def _reasons(bound_ok: bool, unbound_ok: bool, space_ok: bool, pv_found: bool) -> list[str]:
    out = []
    if not bound_ok:
        out.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        out.append(ERR_REASON_BIND_CONFLICT)
    if not space_ok:
        out.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if not pv_found:
        out.append(ERR_REASON_PV_NOT_EXIST)
    return out
