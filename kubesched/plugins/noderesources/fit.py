"""NodeResourcesFit: filters out nodes without room for the pod's requests and scores the
rest by a configurable strategy (upstream ``noderesources/fit.go``).

PreFilter computes the pod's request once (never narrows the nodes); Filter compares it
with each node's free allocatable (:mod:`.fitting`). PreScore computes the pod's
per-resource requests for the scoring strategy (LeastAllocated by default,
MostAllocated, RequestedToCapacityRatio); it never returns Skip. Fit has no
NormalizeScore. Feature gates as in v1.34 defaults: sidecar containers and pod-level
resources on, in-place pod resize on (pod scale-down re-queues), queueing hints on.

DRAExtendedResource (on from v1.36): an extended resource a DeviceClass maps (its
``extendedResourceName`` or ``deviceclass.resource.kubernetes.io/<class>``) is not checked
on a node that has none of it in allocatable; DynamicResources allocates devices for it
(:mod:`kubesched.framework.dra_extended`). DeviceClass events then re-queue pods that
request the class's resource. Scoring still counts only allocatable (upstream's DRA-aware
scoring of such resources is not ported).
"""

from __future__ import annotations

from collections.abc import Hashable

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar_resource_name
from kubesched.api.dra import DeviceClass
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.dra_extended import (
    DEVICE_CLASS_PREFIX, GATE as DRA_EXTENDED_RESOURCE, mapped_requests, resolver_of,
)
from kubesched.framework.features import features_of
from kubesched.framework.events import (
    ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource,
)
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.rowclasses import map_classes
from kubesched.framework.status import SUCCESS, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.noderesources.args import (
    LEAST_ALLOCATED, MOST_ALLOCATED, NodeResourcesFitArgs, parse_fit_args,
)
from kubesched.plugins.noderesources.fitting import (
    PodRequest, compute_pod_request, fits_nodes, fits_status, insufficient,
)
from kubesched.plugins.noderesources.least_allocated import LeastAllocated
from kubesched.plugins.noderesources.most_allocated import MostAllocated
from kubesched.plugins.noderesources.requested_to_capacity_ratio import RequestedToCapacityRatio
from kubesched.plugins.noderesources.resource_allocation import ResourceAllocationScorer, Scorer

log = logging.getLogger(__name__)

_PRE_FILTER_KEY: StateKey[PodRequest] = StateKey("PreFilter" + names.NODE_RESOURCES_FIT)


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> "_PreScoreState":
        return self


_PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + names.NODE_RESOURCES_FIT)


def _strategy_scorer(args: NodeResourcesFitArgs) -> Scorer:
    s = args.scoring_strategy
    weights = [r.weight for r in s.resources]
    if s.type == LEAST_ALLOCATED:
        return LeastAllocated(weights)
    if s.type == MOST_ALLOCATED:
        return MostAllocated(weights)
    return RequestedToCapacityRatio(weights, s.shape or ())


class Fit:
    name = names.NODE_RESOURCES_FIT

    def __init__(self, args: NodeResourcesFitArgs | Mapping[str, Any] | None = None,
                 handle: Any = None) -> None:
        self.args = parse_fit_args(args)
        self.handle = handle
        self.dra_extended = handle is not None and features_of(handle).enabled(DRA_EXTENDED_RESOURCE)
        s = self.args.scoring_strategy
        self.scorer = ResourceAllocationScorer(s.type, s.resources, _strategy_scorer(self.args),
                                               use_requested=False)

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> NodeResourcesFitArgs:
        return parse_fit_args(raw, path)

    # -- PreFilter / Filter ---------------------------------------------------------------
    def _pod_request(self, pod: Pod) -> PodRequest:
        req = compute_pod_request(pod, self.args.ignored_resources, self.args.ignored_resource_groups)
        to_dra = self._to_dra(pod)
        return replace(req, to_dra=to_dra) if to_dra else req

    def _to_dra(self, pod: Pod) -> frozenset[str]:
        """The pod's requests a DeviceClass maps (empty with the gate off)."""
        if not self.dra_extended:
            return frozenset()
        return mapped_requests(pod.requests, resolver_of(self.handle.dra))

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        state.write(_PRE_FILTER_KEY, self._pod_request(pod))
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return fits_status(state.read(_PRE_FILTER_KEY), node_info)

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        req = state.read(_PRE_FILTER_KEY)
        return map_classes(table, idx, lambda t, i: fits_nodes(req, t, i))

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same requests get the same results on a node (NodeLocalPlugin)."""
        return (tuple(sorted(pod.requests.items())), pod.non0_cpu, pod.non0_mem, self._to_dra(pod))

    # -- PreScore / Score -----------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        state.write(_PRE_SCORE_KEY, _PreScoreState(self.scorer.pod_requests(pod)))
        return SUCCESS

    def _requests(self, state: CycleState, pod: Pod) -> tuple[int, ...]:
        s = state.get(_PRE_SCORE_KEY)
        return s.pod_requests if s is not None else self.scorer.pod_requests(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return self.scorer.score(node_info, self._requests(state, pod))

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        reqs = self._requests(state, pod)
        return map_classes(table, idx, lambda t, i: self.scorer.score_nodes(t, i, reqs))

    # -- queueing -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        events = [
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
                                 self.hint_after_pod_event),
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
                                 self.hint_after_node_change),
        ]
        if self.dra_extended:
            events.append(ClusterEventWithHint(ClusterEvent(Resource.DeviceClass, ActionType.Add | ActionType.Update),
                                               self.hint_after_device_class))
        return events

    def hint_after_device_class(self, pod: Pod, old: DeviceClass | None, new: DeviceClass | None) -> QueueingHint:
        """``isSchedulableAfterDeviceClassEvent``: a new class whose implicit name the pod
        requests, or a class whose ``extendedResourceName`` changed to one the pod requests."""
        if not isinstance(new, DeviceClass):
            return QueueingHint.QueueSkip
        ern = (new.raw.get("spec") or {}).get("extendedResourceName")
        if isinstance(old, DeviceClass):
            if (old.raw.get("spec") or {}).get("extendedResourceName") == ern:
                return QueueingHint.QueueSkip
        elif DEVICE_CLASS_PREFIX + new.name in pod.requests:
            return QueueingHint.Queue
        return QueueingHint.Queue if isinstance(ern, str) and ern in pod.requests else QueueingHint.QueueSkip

    def hint_after_pod_event(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        """A deleted scheduled (or nominated) pod, or a scale-down that frees a resource the
        pod requests, may make it fit (``isSchedulableAfterPodEvent``)."""
        if new is None:
            if old is None or (not old.node_name and not old.nominated_node_name):
                return QueueingHint.QueueSkip
            return QueueingHint.Queue
        if new.uid == pod.uid:
            return QueueingHint.Queue
        if not new.node_name or old is None:
            return QueueingHint.QueueSkip
        for name, v in pod.requests.items():
            if v == 0 or not (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)):
                continue
            if old.requests.get(name, 0) > new.requests.get(name, 0):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def hint_after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        """A new node the pod fits, or an allocatable increase of something the pod needs
        on a node it fits (``isSchedulableAfterNodeChange``)."""
        if new is None:
            return QueueingHint.Queue
        req = compute_pod_request(pod)
        to_dra = self._to_dra(pod)
        req = replace(req, to_dra=to_dra) if to_dra else req
        reasons, _ = insufficient(req, NodeInfo(new))
        if reasons:
            return QueueingHint.QueueSkip
        if old is None:
            return QueueingHint.Queue
        return QueueingHint.Queue if _requested_increased(req, old, new) else QueueingHint.QueueSkip


def _requested_increased(req: PodRequest, old: Node, new: Node) -> bool:
    """``haveAnyRequestedResourcesIncreased``."""
    a, b = old.allocatable, new.allocatable
    if b.get(PODS, 0) > a.get(PODS, 0):
        return True
    if req.empty:
        return False
    for name, q in ((CPU, req.milli_cpu), (MEMORY, req.memory), (EPHEMERAL_STORAGE, req.ephemeral_storage)):
        if q > 0 and b.get(name, 0) > a.get(name, 0):
            return True
    return any(q != 0 and (b.get(name, 0) > a.get(name, 0) or (name in req.to_dra and b.get(name, 0) <= 0))
               for name, q in req.scalars)
