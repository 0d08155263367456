"""The InterPodAffinity plugin (upstream ``interpodaffinity/plugin.go``): wires PreFilter,
Filter (+ AddPod/RemovePod), PreScore, Score and NormalizeScore, in both the per-node and
the batch form, and the queueing hints that re-queue a rejected pod."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource,
)
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.interpodaffinity import counting, filtering, scoring, tablescore
from kubesched.plugins.interpodaffinity.args import InterPodAffinityArgs, parse_args, validate
from kubesched.plugins.interpodaffinity.common import existing_term_matches_all

_NOT_FOUND = "not found"  # upstream fwk.ErrNotFound


class InterPodAffinity:
    name = names.INTER_POD_AFFINITY

    def __init__(self, args: InterPodAffinityArgs | Mapping[str, Any] | None, handle: Any) -> None:
        if not isinstance(args, InterPodAffinityArgs):
            args = parse_args(args, "")
        validate(args, "")
        self.args = args
        self.handle = handle
        self._caches = counting.Caches()

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> InterPodAffinityArgs:
        return parse_args(raw, path)

    # -- PreFilter / Filter ---------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        snap = self.handle.snapshot
        s = counting.build_state(self._caches, pod, nodes, getattr(snap, "table", None),
                                 self.handle.objects)
        if filtering.should_skip(s):
            return None, SKIP
        state.write(filtering.PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def _pre_filter_state(self, state: CycleState) -> filtering.PreFilterState | None:
        return state.get(filtering.PRE_FILTER_STATE_KEY)

    @staticmethod
    def _missing_pre_filter_state() -> Status:
        return error(f'error reading "{filtering.PRE_FILTER_STATE_KEY_NAME}" from cycleState: {_NOT_FOUND}')

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return self._update(state, pod_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return self._update(state, pod_to_remove, node_info, -1)

    def _update(self, state: CycleState, other: Pod, node_info: NodeInfo, multiplier: int) -> Status:
        s = self._pre_filter_state(state)
        if s is None:
            return self._missing_pre_filter_state()
        if node_info.node is not None:
            s.update_with_pod(other, node_info.node, multiplier)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = self._pre_filter_state(state)
        if s is None:
            return self._missing_pre_filter_state()
        st = filtering.filter_node(s, node_info.node)
        return SUCCESS if st is None else st

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        s = state.read(filtering.PRE_FILTER_STATE_KEY)
        return filtering.filter_mask(s, table, idx)

    # -- PreScore / Score -----------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        has_constraints = scoring.has_preferred_constraints(pod)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        snap = self.handle.snapshot
        # Incremental forms of scoring.build_scores over every node (nodes without pods
        # with affinity contribute only through the incoming pod's preferred terms): over
        # the NodeTable's rows when there is one, else over the NodeInfos.
        table = getattr(snap, "table", None)
        s: scoring.PreScoreState
        if table is not None and table.size == len(snap.node_infos):
            totals = tablescore.build_totals(self._caches.rows, pod, table, self.handle.objects,
                                             self.args.hard_pod_affinity_weight)
            s = scoring.PreScoreState(table=table, totals=totals)
        else:
            s = scoring.PreScoreState(counting.build_scores(
                self._caches, pod, snap.node_infos, table, self.handle.objects,
                self.args.hard_pod_affinity_weight))
        if s.empty:
            return SKIP
        state.write(scoring.PRE_SCORE_STATE_KEY, s)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        node = node_info.node
        return scoring.score_node(s, node.labels if node is not None else {})

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        return scoring.score_rows(s, table, idx)

    def normalize_score(self, state: CycleState, pod: Pod, names: Sequence[str],
                        scores: np.ndarray) -> Status:
        s = state.get(scoring.PRE_SCORE_STATE_KEY)
        if s is None:
            return error(f'failed to read "{scoring.PRE_SCORE_STATE_KEY_NAME}" from cycleState: {_NOT_FOUND}')
        if s.empty:
            return SUCCESS
        scoring.normalize(scores)
        return SUCCESS

    # -- queueing hints -------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # QueueingHints are GA (locked on) in v1.34, so UpdateNodeTaint is not registered.
        return [
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.Add | ActionType.UpdatePodLabel
                                              | ActionType.Delete), self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                                 self.is_schedulable_after_node_change),
        ]

    @staticmethod
    def is_schedulable_after_pod_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        if (new is not None and not new.node_name) or (old is not None and not old.node_name):
            return QueueingHint.QueueSkip
        aff = pod.affinity
        terms = aff.pod_affinity_required if aff else ()
        anti = aff.anti_affinity_required if aff else ()
        if new is not None and old is not None:
            if not existing_term_matches_all(terms, old) and existing_term_matches_all(terms, new):
                return QueueingHint.Queue
            if existing_term_matches_all(anti, old) and not existing_term_matches_all(anti, new):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if new is not None:
            return QueueingHint.Queue if existing_term_matches_all(terms, new) else QueueingHint.QueueSkip
        if old is None or not existing_term_matches_all(anti, old):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        if new is None:
            return QueueingHint.Queue  # upstream: the object is not a node (an error) -> Queue
        aff = pod.affinity
        for t in (aff.pod_affinity_required if aff else ()):
            key = t.topology_key
            if old is None:
                if key in new.labels:
                    return QueueingHint.Queue
                continue
            if key in new.labels and (key not in old.labels or old.labels[key] != new.labels[key]):
                return QueueingHint.Queue
        for t in (aff.anti_affinity_required if aff else ()):
            if old is None:
                return QueueingHint.Queue
            key = t.topology_key
            if key in old.labels and (key not in new.labels or old.labels[key] != new.labels[key]):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip
