"""TaintToleration: a pod may land only on nodes whose NoSchedule/NoExecute taints it
tolerates, and prefers nodes with fewer untolerated PreferNoSchedule taints
(upstream ``plugins/tainttoleration``).

Nodes share few distinct taint lists, so the batch form evaluates each distinct list of
``NodeTable.taints()`` once and broadcasts the result to the rows that carry it.
"""

from __future__ import annotations

from collections.abc import Hashable

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod, Taint, Toleration
from kubesched.framework.features import features_of
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.events import (
    ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Status, error, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.helper.normalize import default_normalize_score

logger = logging.getLogger(__name__)

_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
_PREFER_NO_SCHEDULE = "PreferNoSchedule"


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's tolerations that can tolerate a PreferNoSchedule taint."""

    tolerations: tuple[Toleration, ...]

    def clone(self) -> "_PreScoreState":
        return self


_PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + names.TAINT_TOLERATION)


def _tolerated(taint: Taint, tolerations: Sequence[Toleration], comparison_operators: bool) -> bool:
    return any(t.tolerates(taint, comparison_operators) for t in tolerations)


def find_untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                           comparison_operators: bool = False) -> Taint | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates (``FindMatchingUntoleratedTaint``
    with ``DoNotScheduleTaintsFilterFunc``), or None. ``comparison_operators``: the
    TaintTolerationComparisonOperators gate (``Lt``/``Gt`` tolerations)."""
    for taint in taints:
        if taint.effect in _DO_NOT_SCHEDULE and not _tolerated(taint, tolerations, comparison_operators):
            return taint
    return None


# The Filter reason from the release with TaintTolerationGenericReason on: one for every node.
GENERIC_REASON = unresolvable("node(s) had untolerated taint(s)")


def _reject(taint: Taint) -> Status:
    return unresolvable(f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}")


def _prefer_no_schedule_tolerations(pod: Pod) -> tuple[Toleration, ...]:
    # An empty effect tolerates every effect, PreferNoSchedule included.
    return tuple(t for t in pod.tolerations if not t.effect or t.effect == _PREFER_NO_SCHEDULE)


def _count_intolerable(taints: Sequence[Taint], tolerations: Sequence[Toleration], comparison_operators: bool) -> int:
    return sum(1 for t in taints
               if t.effect == _PREFER_NO_SCHEDULE and not _tolerated(t, tolerations, comparison_operators))


class TaintToleration:
    name = names.TAINT_TOLERATION

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        fts = features_of(handle)
        self.generic_reason = fts.has("TaintTolerationGenericReason")
        self.comparison_operators = fts.enabled("TaintTolerationComparisonOperators")

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same tolerations get the same results on a node (NodeLocalPlugin)."""
        return pod.tolerations

    # -- Filter -----------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        taints = node.taints if node is not None else ()
        taint = find_untolerated_taint(taints, pod.tolerations, self.comparison_operators)
        if taint is None:
            return SUCCESS
        return GENERIC_REASON if self.generic_reason else _reject(taint)

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        ids, sets = table.taints()
        rows = ids[idx]
        ok = np.zeros(len(sets), bool)
        for u in np.unique(rows).tolist():
            ok[u] = find_untolerated_taint(sets[u], pod.tolerations, self.comparison_operators) is None
        out: np.ndarray = ok[rows]
        return out

    # -- Score ------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        state.write(_PRE_SCORE_KEY, _PreScoreState(_prefer_no_schedule_tolerations(pod)))
        return SUCCESS

    @staticmethod
    def _state(state: CycleState) -> _PreScoreState | Status:
        s = state.get(_PRE_SCORE_KEY)
        if s is None:
            return error(f'failed to read "{_PRE_SCORE_KEY.name}" from cycleState: not found')
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        return _count_intolerable(node.taints if node is not None else (), s.tolerations, self.comparison_operators)

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable,
                    idx: np.ndarray) -> np.ndarray | Status:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        ids, sets = table.taints()
        rows = ids[idx]
        counts = np.zeros(len(sets), np.int64)
        for u in np.unique(rows).tolist():
            counts[u] = _count_intolerable(sets[u], s.tolerations, self.comparison_operators)
        out: np.ndarray = counts[rows]
        return out

    def normalize_score(self, state: CycleState, pod: Pod, names: Sequence[str],
                        scores: np.ndarray) -> Status:
        default_normalize_score(scores, reverse=True)
        return SUCCESS

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.UpdatePodToleration),
                                 self.is_schedulable_after_pod_toleration_change),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue only when the node went from having an untolerated taint to having none."""
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.Queue  # upstream: a type error, retried with backoff
        cmp = self.comparison_operators
        was_untolerated = old is None or find_untolerated_taint(old.taints, pod.tolerations, cmp) is not None
        is_untolerated = find_untolerated_taint(new.taints, pod.tolerations, cmp) is not None
        if was_untolerated and not is_untolerated:
            logger.debug("node %s now tolerated by pod %s", new.name, pod.key)
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Only the unschedulable pod's own toleration update can help it."""
        if not isinstance(new, Pod):
            return QueueingHint.Queue
        return QueueingHint.Queue if new.uid == pod.uid else QueueingHint.QueueSkip
