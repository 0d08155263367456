"""PodTopologySpread: spreads pods over topology domains (upstream ``plugin.go``).

Wires the extension points to ``filtering`` and ``scoring`` and chooses the constraints:
a pod's own ones, else the default constraints (``List``) or the system ones (``System``:
hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway), which apply only when
something selects the pod (upstream ``DefaultSelector``: Services, ReplicationControllers,
ReplicaSets, StatefulSets).

The selector of the default constraints comes from the workload listers of the framework
handle (``handle.objects.workloads()``, upstream's informer listers), see
``defaultselector``. As upstream, the plugin registers no events for Services or
controllers: a change to them does not move pods it rejected (the periodic flush does).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod, with_comparing_tolerations
from kubesched.api.selectors import EVERYTHING, LabelSelector
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.features import features_of
from kubesched.framework.events import (
    ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource,
)
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable, RowInfos
from kubesched.framework.status import SKIP, SUCCESS, Status, error
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.podtopologyspread import filtering, scoring
from kubesched.plugins.podtopologyspread.args import (
    DO_NOT_SCHEDULE, HONOR, SCHEDULE_ANYWAY, SYSTEM_DEFAULT_CONSTRAINTS, SYSTEM_DEFAULTING,
    DefaultConstraint, PodTopologySpreadArgs, parse_args,
)
from kubesched.plugins.podtopologyspread.defaultselector import default_selector
from kubesched.plugins.podtopologyspread.common import (
    Constraint, MatchCounter, default_constraints, node_has_all_keys, pod_constraints,
)

log = logging.getLogger(__name__)

PRE_FILTER_KEY: StateKey[filtering.PreFilterState] = StateKey("PreFilter" + names.POD_TOPOLOGY_SPREAD)
PRE_SCORE_KEY: StateKey[scoring.PreScoreState] = StateKey("PreScore" + names.POD_TOPOLOGY_SPREAD)


class PodTopologySpread:
    name = names.POD_TOPOLOGY_SPREAD

    def __init__(self, args: PodTopologySpreadArgs | None = None, handle: Any = None) -> None:
        args = args if args is not None else PodTopologySpreadArgs()
        self.handle = handle
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.defaults: tuple[DefaultConstraint, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else args.default_constraints)
        # The selector for default constraints (upstream helper.DefaultSelector); tests may
        # replace it.
        self.default_selector_of: Callable[[Pod], LabelSelector] = self._default_selector
        self.counter = MatchCounter()
        # TaintTolerationComparisonOperators: nodeTaintsPolicy Honor lets Lt/Gt tolerations compare
        self.comparison_operators = features_of(handle).enabled("TaintTolerationComparisonOperators")

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> PodTopologySpreadArgs:
        return parse_args(raw, path)

    # -- constraints --------------------------------------------------------------------
    def _default_selector(self, pod: Pod) -> LabelSelector:
        objects = getattr(self.handle, "objects", None)
        if objects is None:  # a handle without cluster objects: nothing selects the pod
            return EVERYTHING
        return default_selector(pod, objects.workloads())

    def constraints(self, pod: Pod, action: str) -> tuple[Constraint, ...]:
        """The pod's constraints for ``action``, or the defaults when it has none at all."""
        if pod.spread_constraints:
            return pod_constraints(pod, action)
        if not any(c.when_unsatisfiable == action for c in self.defaults):
            return ()
        return default_constraints(self.defaults, action, self.default_selector_of(pod))

    # -- PreFilter / Filter -------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        state.write(PRE_FILTER_KEY, filtering.compute_state(self._tolerating(pod), constraints, nodes,
                                                            self.counter, self._table_of(nodes)))
        return None, SUCCESS

    def _table_of(self, nodes: Sequence[NodeInfo]) -> NodeTable | None:
        """The snapshot's NodeTable when ``nodes`` are exactly its rows, else None."""
        snap = getattr(self.handle, "snapshot", None)
        if snap is None or nodes is not snap.node_infos:
            return None
        table: NodeTable = snap.table
        if table.size != len(nodes):
            return None
        return table

    def _tolerating(self, pod: Pod) -> Pod:
        """The pod as node inclusion sees its tolerations (``matchNodeInclusionPolicies``
        with the comparison-operators gate)."""
        return with_comparing_tolerations(pod) if self.comparison_operators else pod

    @staticmethod
    def _pre_filter_state(state: CycleState) -> filtering.PreFilterState | Status:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return error(f'reading "{PRE_FILTER_KEY.name}" from cycleState: not found')
        return s

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        filtering.update_with_pod(s, pod_to_add, self._tolerating(pod), node_info.node, 1)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod,
                   node_info: NodeInfo) -> Status:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        filtering.update_with_pod(s, pod_to_remove, self._tolerating(pod), node_info.node, -1)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        return filtering.filter_node(s, pod, node_info.node)

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return np.zeros(idx.size, dtype=bool)  # the per-node form reports the error
        return filtering.filter_nodes(s, pod, table, idx)

    # -- PreScore / Score ---------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        all_nodes = self.handle.snapshot.node_infos
        if not all_nodes:
            return SKIP
        constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        # Nodes lacking a topology key are ignored unless the constraints are the system
        # defaults (so nodes without a zone label still get hostname spreading).
        require_all = bool(pod.spread_constraints) or not self.system_defaulted
        table = self._table_of(all_nodes)
        rows = None
        if table is not None and nodes is table.infos:  # every node feasible: every row
            rows = np.arange(table.size, dtype=np.intp)
        elif isinstance(nodes, RowInfos) and nodes.table is table:
            rows = nodes.rows
        elif table is not None:
            index = table.index
            if all(ni.name in index for ni in nodes):
                rows = np.fromiter((index[ni.name] for ni in nodes), dtype=np.intp, count=len(nodes))
        state.write(PRE_SCORE_KEY, scoring.compute_state(self._tolerating(pod), constraints, nodes, all_nodes,
                                                         require_all, self.counter, table, rows))
        return SUCCESS

    @staticmethod
    def _pre_score_state(state: CycleState) -> scoring.PreScoreState:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            raise KeyError(f'error reading "{PRE_SCORE_KEY.name}" from cycleState: not found')
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return scoring.score_node(self._pre_score_state(state), pod, node_info, self.counter)

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        return scoring.score_nodes(self._pre_score_state(state), pod, table, idx, self.counter)

    def normalize_score(self, state: CycleState, pod: Pod, names_: Sequence[str],
                        scores: np.ndarray) -> Status:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return error(f'error reading "{PRE_SCORE_KEY.name}" from cycleState: not found')
        scoring.normalize(s, names_, scores)
        return SUCCESS

    # -- queueing hints -----------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = (ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration
                       | ActionType.Delete)
        node_actions = (ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel
                        | ActionType.UpdateNodeTaint)
        return [ClusterEventWithHint(ClusterEvent(Resource.Pod, pod_actions), self.hint_after_pod_change),
                ClusterEventWithHint(ClusterEvent(Resource.Node, node_actions), self.hint_after_node_change)]

    def hint_after_pod_change(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        """``isSchedulableAfterPodChange`` (only the pod's hard constraints count)."""
        def involved(p: Pod) -> bool:
            return p.uid == pod.uid or (bool(p.node_name) and p.namespace == pod.namespace)

        if (new is not None and not involved(new)) or (old is not None and not involved(old)):
            return QueueingHint.QueueSkip
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if new is not None and old is not None:
            if (pod.uid == new.uid and new.tolerations != old.tolerations
                    and any(c.node_taints_policy == HONOR for c in constraints)):
                return QueueingHint.Queue
            if new.labels == old.labels:
                return QueueingHint.QueueSkip
            for c in constraints:
                if c.selector.matches(old.labels) != c.selector.matches(new.labels):
                    return QueueingHint.Queue
            return QueueingHint.QueueSkip
        changed = new if new is not None else old
        if changed is not None and any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def hint_after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        """``isSchedulableAfterNodeChange``."""
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        old_ok = old is not None and node_has_all_keys(old.labels, constraints)
        new_ok = new is not None and node_has_all_keys(new.labels, constraints)
        if old is not None and new is not None:
            if old_ok != new_ok:
                return QueueingHint.Queue
            if new_ok and (any(old.labels.get(c.topology_key, "") != new.labels.get(c.topology_key, "")
                               for c in constraints) or old.taints != new.taints):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if new is not None:
            return QueueingHint.Queue if new_ok else QueueingHint.QueueSkip
        return QueueingHint.Queue if old_ok else QueueingHint.QueueSkip
