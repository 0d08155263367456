"""VolumeBinding: a pod's PersistentVolumeClaims must be bindable on the node (upstream
``plugins/volumebinding/volume_binding.go``).

PreFilter rejects pods whose claims are missing, lost, being deleted, or unbound with
Immediate binding ("pod has unbound immediate PersistentVolumeClaims"), and skips pods
without claims. Filter asks the binder what the claims need on each node; Reserve assumes
the chosen node's bindings, PreBind writes them and waits for the PV controller
(``bindTimeoutSeconds``), Unreserve reverts. Score is the capacity score of
:mod:`.scoring`, behind StorageCapacityScoring (off before v1.37: PreScore skips).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.errors import DecodeError
from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.features import features_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.storage import NoStorage, StorageLister
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.volumebinding.assumecache import AssumeCache
from kubesched.plugins.volumebinding.binder import BinderError, PodVolumeClaims, PodVolumes, VolumeBinder
from kubesched.plugins.volumebinding.scoring import CAPACITY_SCORING_SHAPE, scaled
from kubesched.plugins.volumebinding.scoring import capacity_score
from kubesched.plugins.helper.pernode import score_each
from kubesched.plugins.helper.shape import Shape

DEFAULT_BIND_TIMEOUT_SECONDS = 600
DEFAULT_SHAPE: tuple[tuple[int, int], ...] = ((0, 0), (100, 10))  # (utilization, score) points
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """``VolumeBindingArgs`` (kubescheduler.config.k8s.io/v1): bindTimeoutSeconds (default
    600) and the scoring ``shape`` (used with StorageCapacityScoring, on from v1.37)."""

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[tuple[int, int], ...] = DEFAULT_SHAPE
    shape_set: bool = False  # shape given in the configuration (else the release's default)


@dataclass(slots=True)
class _State:
    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False
    has_static_bindings: bool = False

    def clone(self) -> "_State":
        return self  # upstream shares the pointer across clones, too


_KEY: StateKey[_State] = StateKey(names.VOLUME_BINDING)


class VolumeBinding:
    name = names.VOLUME_BINDING

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.args = args if isinstance(args, VolumeBindingArgs) else VolumeBindingArgs()
        self.handle = handle
        lister = getattr(handle, "storage", None) if handle is not None else None
        self.lister: StorageLister = lister if lister is not None else NoStorage()
        self.binder = VolumeBinder(self.lister, AssumeCache(self.lister), float(self.args.bind_timeout_seconds))
        # the capacity score (StorageCapacityScoring): None when off, as upstream's nil scorer
        self.shape: Shape | None = None
        if features_of(handle).enabled("StorageCapacityScoring"):
            self.shape = scaled(self.args.shape if self.args.shape_set else CAPACITY_SCORING_SHAPE)

    @staticmethod
    def parse_args(raw: Any, path: str) -> VolumeBindingArgs:
        """Parse and validate ``VolumeBindingArgs`` (``ValidateVolumeBindingArgs``)."""
        if raw is None:
            return VolumeBindingArgs()
        if not isinstance(raw, Mapping):
            raise DecodeError("must be an object", field=path)
        t = raw.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
        if isinstance(t, bool) or not isinstance(t, int):
            raise DecodeError(f"must be an integer, got {t!r}", field=f"{path}.bindTimeoutSeconds")
        if t < 0:
            raise DecodeError(f"Invalid value: {t}: invalid BindTimeoutSeconds, should not be a negative value",
                              field=f"{path}.bindTimeoutSeconds")
        shape = DEFAULT_SHAPE
        if raw.get("shape") is not None:
            pts = []
            prev = -1
            for i, p in enumerate(raw["shape"]):
                sp = f"{path}.shape[{i}]"
                if not isinstance(p, Mapping):
                    raise DecodeError("must be an object", field=sp)
                u, s = p.get("utilization"), p.get("score")
                if not isinstance(u, int) or not 0 <= u <= 100:
                    raise DecodeError(f"Invalid value: {u}: not in valid range [0, 100]", field=f"{sp}.utilization")
                if u <= prev:
                    raise DecodeError(f"Invalid value: {u}: utilization values must be sorted in increasing order",
                                      field=f"{sp}.utilization")
                if not isinstance(s, int) or not 0 <= s <= 10:
                    raise DecodeError(f"Invalid value: {s}: not in valid range [0, 10]", field=f"{sp}.score")
                prev = u
                pts.append((u, s))
            if not pts:
                raise DecodeError("Required value: at least one point must be specified", field=f"{path}.shape")
            shape = tuple(pts)
        return VolumeBindingArgs(t, shape, raw.get("shape") is not None)

    # -- PreFilter ---------------------------------------------------------------------
    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str]:
        """``podHasPVCs``: whether the pod uses claims, and why they cannot be used ("")."""
        has = False
        for vol in pod.volumes:
            if not (vol.is_pvc or vol.is_ephemeral):
                continue
            has = True
            pvc = self.lister.pvc(pod.namespace, vol.claim_name)
            if pvc is None:
                if vol.is_ephemeral:
                    return has, ("waiting for ephemeral volume controller to create the persistentvolumeclaim "
                                 f'"{vol.claim_name}"')
                return has, f'persistentvolumeclaim "{vol.claim_name}" not found'
            if pvc.phase == "Lost":
                return has, f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
            if pvc.deletion_timestamp is not None:
                return has, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if vol.is_ephemeral and pvc.controller_uid != pod.uid:
                return has, (f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} "
                             "(pod is not owner)")
        return has, ""

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        has, problem = self._pod_has_pvcs(pod)
        if problem:
            return None, unresolvable(problem)
        if not has:
            state.write(_KEY, _State())
            return None, SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except BinderError as exc:
            return None, error(str(exc))
        if claims.unbound_immediate:
            return None, unresolvable(UNBOUND_IMMEDIATE)
        state.write(_KEY, _State(claims=claims))
        return None, SUCCESS

    # -- Filter ------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = state.get(_KEY)
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        node = node_info.node
        if s.claims is None or node is None:
            return SUCCESS
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod, s.claims, node)
        except BinderError as exc:
            return error(str(exc))
        if reasons:
            return Status(Code.UnschedulableAndUnresolvable, tuple(reasons))
        s.by_node[node.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        """Batch form. Claims that are all bound to existing PVs without node affinity fit
        every node (nothing to bind, and Reserve finds them all bound); otherwise the
        per-node check on each row."""
        s = state.get(_KEY)
        if s is not None and s.claims is not None and not s.claims.unbound_delay:
            pvs = [self.binder.cache.get_pv(c.volume_name) for c in s.claims.bound]
            if all(pv is not None and pv.node_affinity is None for pv in pvs):
                return np.ones(idx.size, dtype=bool)
        infos = table.infos
        return np.fromiter((self.filter(state, pod, infos[i]).success for i in idx.tolist()),
                           dtype=bool, count=idx.size)

    # -- Score (StorageCapacityScoring, :mod:`.scoring`) ------------------------------------
    def signature(self, pod: Pod) -> Hashable | None:
        """A pod without claims is skipped by PreFilter and scores 0 on every node
        (NodeLocalPlugin: the framework reuses that constant); other pods are never cached."""
        return () if not any(v.is_pvc or v.is_ephemeral for v in pod.volumes) else None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Skip without the gate; with it, every pod is scored (upstream: ``hasStaticBindings
        || EnableStorageCapacityScoring``, and the scorer exists only with the gate)."""
        if self.shape is None:
            return SKIP
        if state.get(_KEY) is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        s = state.get(_KEY)
        if self.shape is None or node_info.node is None:
            return 0
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        volumes = s.by_node.get(node_info.node.name)
        return 0 if volumes is None else capacity_score(self.shape, volumes)

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray | Status:
        s = state.get(_KEY)
        if self.shape is None or (s is not None and not s.by_node):
            return np.zeros(idx.size, np.int64)
        return score_each(lambda ni: self.score(state, pod, ni), table, idx)

    # -- Reserve / PreBind ------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(_KEY)
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        volumes = s.by_node.get(node_name)
        if volumes is None:
            s.all_bound = True
            return SUCCESS
        try:
            s.all_bound = self.binder.assume(pod, node_name, volumes)
        except (BinderError, DecodeError) as exc:
            return error(str(exc))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(_KEY)
        if s is None:
            return
        volumes = s.by_node.get(node_name)
        if volumes is not None:
            self.binder.revert(volumes)

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream ``PreBindPreFlight`` (1.35): Skip when every claim is bound (PreBind has
        nothing to do), an error when the node has no volume plan."""
        s = state.get(_KEY)
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        if s.all_bound:
            return SKIP
        if node_name not in s.by_node:
            return error(f'no pod volumes found for node "{node_name}"')
        return SUCCESS

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(_KEY)
        if s is None:
            return error(f'reading "{_KEY.name}" from cycleState: not found')
        if s.all_bound:
            return SUCCESS
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return error(f'no pod volumes found for node "{node_name}"')
        info = self.handle.snapshot.get(node_name) if self.handle is not None else None
        if info is None or info.node is None:
            return error(f'binding volumes: failed to get node "{node_name}": node "{node_name}" not found')
        try:
            self.binder.bind(pod, info.node, volumes, self.handle.storage_writer)
        except BinderError as exc:
            return error(str(exc))
        return SUCCESS

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.StorageClass, ActionType.Add | ActionType.Update),
                                 _after_storage_class_change),
            ClusterEventWithHint(ClusterEvent(Resource.PersistentVolumeClaim, ActionType.Add | ActionType.Update),
                                 _after_pvc_change),
            ClusterEventWithHint(ClusterEvent(Resource.PersistentVolume, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(ClusterEvent(Resource.CSINode, ActionType.Add | ActionType.Update),
                                 _after_csinode_change),
            ClusterEventWithHint(ClusterEvent(Resource.CSIDriver, ActionType.Update), _after_csidriver_change),
            ClusterEventWithHint(ClusterEvent(Resource.CSIStorageCapacity, ActionType.Add | ActionType.Update),
                                 _after_capacity_change),
        ]


def _after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A claim the pod uses was created or changed."""
    if new is None or new.namespace != pod.namespace:
        return QueueingHint.QueueSkip
    return QueueingHint.Queue if new.name in pod.pvc_names else QueueingHint.QueueSkip


def _after_storage_class_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A new class, or a class whose allowedTopologies changed."""
    if old is None or new is None or old.allowed_topologies != new.allowed_topologies:
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _after_csinode_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A new CSINode, or a change of its migrated-plugins annotation."""
    if old is None or new is None:
        return QueueingHint.Queue
    key = "storage.alpha.kubernetes.io/migrated-plugins"
    return QueueingHint.Queue if old.annotations.get(key) != new.annotations.get(key) else QueueingHint.QueueSkip


def _after_csidriver_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """Storage capacity tracking turned off for a driver of one of the pod's inline CSI volumes."""
    if old is None or new is None:
        return QueueingHint.Queue
    for vol in pod.volumes:
        if vol.source == "csi" and vol.csi_driver == new.name and old.storage_capacity and not new.storage_capacity:
            return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _after_capacity_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A new CSIStorageCapacity, or one whose volume limit grew."""
    if old is None or new is None:
        return QueueingHint.Queue

    def limit(c: Any) -> Any:
        return c.maximum_volume_size if c.maximum_volume_size is not None else c.capacity

    lo, ln = limit(old), limit(new)
    if ln is not None and (lo is None or ln.value() > lo.value()):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip
