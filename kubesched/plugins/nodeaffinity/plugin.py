"""NodeAffinity: filters nodes by the pod's nodeSelector and required node affinity (and
the profile's scheduler-enforced ``addedAffinity``), and scores them by the weights of
the preferred terms they match (upstream ``plugins/nodeaffinity``).

PreFilter narrows the pod to named nodes when every required term pins
``metadata.name``; the batch forms evaluate the terms on the NodeTable's label columns.
"""

from __future__ import annotations

import json

from collections.abc import Hashable

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.events import (
    ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource,
)
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.helper.normalize import default_normalize_score
from kubesched.plugins.nodeaffinity.args import NodeAffinityArgs, parse_args
from kubesched.plugins.nodeaffinity.selector import (
    NAME_FIELD, PreferredTerms, RequiredAffinity, Terms, selector_items,
)
from kubesched.api.nodeaffinity import (
    aggregate, is_empty_term, raw_node_affinity, raw_required_terms, required_terms, term_errors,
)

logger = logging.getLogger(__name__)

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_REJECT_POD = unresolvable(ERR_REASON_POD)
_REJECT_ENFORCED = unresolvable(ERR_REASON_ENFORCED)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    required: RequiredAffinity

    def clone(self) -> "_PreFilterState":
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    preferred: PreferredTerms | None

    def clone(self) -> "_PreScoreState":
        return self


_PRE_FILTER_KEY: StateKey[_PreFilterState] = StateKey("PreFilter" + names.NODE_AFFINITY)
_PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + names.NODE_AFFINITY)


# -- the pod's terms ----------------------------------------------------------------------
def required_affinity(pod: Pod) -> RequiredAffinity:
    """``GetRequiredNodeAffinity``: nodeSelector AND the required terms (ORed)."""
    selector = selector_items(pod.node_selector)
    terms = required_terms(pod)
    if terms is None:
        return RequiredAffinity(selector, None)
    return RequiredAffinity(selector, Terms(*terms))


def preferred_terms(pod: Pod) -> PreferredTerms | Status | None:
    """The pod's preferred terms; None when it has none; an error Status when a term does
    not parse (upstream ``NewPreferredSchedulingTerms``)."""
    raw = raw_node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")
    if not raw or pod.affinity is None:
        return None
    errs = []
    for i, t in enumerate(raw):
        pref = t.get("preference") if isinstance(t, Mapping) else None
        # Zero-weight and empty terms are skipped unparsed, as upstream does.
        if isinstance(pref, Mapping) and t.get("weight") and not is_empty_term(pref):
            errs.extend(term_errors(pref, f"[{i}]"))
    if errs:
        return error(aggregate(errs))
    return PreferredTerms(tuple((p.weight, p.term) for p in pod.affinity.node_preferred))


def _pre_filter_node_names(raw_terms: Sequence[Any]) -> set[str] | None:
    """Nodes the terms pin by ``metadata.name In``; None when some term does not pin."""
    node_names: set[str] | None = None
    for t in raw_terms:
        term_names: set[str] | None = None
        fields = t.get("matchFields") if isinstance(t, Mapping) else None
        for r in fields or ():
            if r.get("key") == NAME_FIELD and r.get("operator") == "In":
                values = set(r.get("values") or ())
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None  # terms are ORed: this one admits every node
        node_names = term_names if node_names is None else node_names | term_names
    return node_names


class NodeAffinity:
    name = names.NODE_AFFINITY

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        if args is None or isinstance(args, Mapping):
            args = parse_args(args, "args")
        self.args: NodeAffinityArgs = args
        self.added_required = args.added_required
        self.added_preferred = args.added_preferred
        self.handle = handle

    parse_args = staticmethod(parse_args)

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same nodeSelector and node affinity (as written) get the same results on a node (NodeLocalPlugin)."""
        spec = pod.raw.get("spec") or {}
        aff = (spec.get("affinity") or {}).get("nodeAffinity")
        return json.dumps([spec.get("nodeSelector"), aff], sort_keys=True)

    # -- PreFilter / Filter -----------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        no_node_affinity = pod.affinity is None or pod.affinity.node_required is None
        if no_node_affinity and self.added_required is None and not pod.node_selector:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, _PreFilterState(required_affinity(pod)))
        raw_terms = raw_required_terms(pod)
        if no_node_affinity or not raw_terms:
            return None, SUCCESS
        node_names = _pre_filter_node_names(raw_terms)
        if node_names is None:
            return None, SUCCESS
        if not node_names:
            return None, unresolvable(ERR_REASON_CONFLICT)
        logger.debug("pod %s narrowed to nodes %s", pod.key, sorted(node_names))
        return PreFilterResult(frozenset(node_names)), SUCCESS

    @staticmethod
    def _required(state: CycleState, pod: Pod) -> RequiredAffinity:
        s = state.get(_PRE_FILTER_KEY)
        # Without PreFilter (disabled), compute it here, as upstream does.
        return s.required if s is not None else required_affinity(pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return _REJECT_POD
        if self.added_required is not None and not self.added_required.matches(node):
            return _REJECT_ENFORCED
        return SUCCESS if self._required(state, pod).matches(node) else _REJECT_POD

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        mask = self._required(state, pod).mask(table, idx)
        if self.added_required is not None:
            mask &= self.added_required.mask(table, idx)
        return mask

    # -- PreScore / Score -------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        preferred = preferred_terms(pod)
        if isinstance(preferred, Status):
            return preferred
        if preferred is None and self.added_preferred is None:
            return SKIP
        state.write(_PRE_SCORE_KEY, _PreScoreState(preferred))
        return SUCCESS

    @staticmethod
    def _preferred(state: CycleState, pod: Pod) -> PreferredTerms | Status | None:
        s = state.get(_PRE_SCORE_KEY)
        return s.preferred if s is not None else preferred_terms(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        node = node_info.node
        preferred = self._preferred(state, pod)
        if isinstance(preferred, Status):
            return preferred
        if node is None:
            return 0
        count = 0
        if self.added_preferred is not None:
            count += self.added_preferred.score(node)
        if preferred is not None:
            count += preferred.score(node)
        return count

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable,
                    idx: np.ndarray) -> np.ndarray | Status:
        preferred = self._preferred(state, pod)
        if isinstance(preferred, Status):
            return preferred
        out = np.zeros(idx.size, dtype=np.int64)
        if self.added_preferred is not None:
            out += self.added_preferred.scores(table, idx)
        if preferred is not None:
            out += preferred.scores(table, idx)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, names: Sequence[str],
                        scores: np.ndarray) -> Status:
        """``helper.DefaultNormalizeScore(MaxNodeScore, false, scores)``."""
        default_normalize_score(scores, reverse=False)
        return SUCCESS

    # -- Queueing hints ---------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                                     self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when a node is added matching the pod, or starts to match it."""
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.Queue
        if self.added_required is not None and not self.added_required.matches(new):
            return QueueingHint.QueueSkip
        required = required_affinity(pod)
        matched, err = required.match_with_error(new)
        if err:
            return QueueingHint.Queue
        if not matched:
            return QueueingHint.QueueSkip
        if old is None:
            return QueueingHint.Queue
        was_matched, err = required.match_with_error(old)
        if err or not was_matched:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
