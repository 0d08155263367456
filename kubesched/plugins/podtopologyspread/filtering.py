"""PreFilter / Filter of PodTopologySpread (upstream ``filtering.go``).

PreFilter counts, per hard (DoNotSchedule) constraint and per topology domain, the pods
matching the constraint's selector on the eligible nodes, and keeps for each constraint
the two "critical paths" (upstream's bookkeeping of the domains with the fewest matches:
``paths[0]`` always holds the global minimum, ``paths[1]`` something not smaller).
AddPod/RemovePod update a clone of that state for preemption and nominated pods.

Filter: a node without a constraint's topology label is UnschedulableAndUnresolvable;
otherwise it fails when ``matches in its domain + (1 if the pod matches itself) - global
minimum > maxSkew`` (the minimum counts as 0 while there are fewer domains than
``minDomains``).

Domain order: upstream fills the critical paths iterating a Go map (random order); here it
is the order in which nodes first show a domain. Only ties between equal counts can differ,
and only ``paths[0].MatchNum`` (a count, not a domain) is read by Filter.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Status, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.podtopologyspread.common import (
    MAX_INT32, Constraint, MatchCounter, NodeInclusion, node_has_all_keys,
)
from kubesched.plugins.podtopologyspread.tablecount import DomainCounts, prefilter_domain_counts

log = logging.getLogger(__name__)

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
_NOT_MATCH = unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
_LABEL_MISSING = unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)


class CriticalPaths:
    """Two (domain, match count) pairs; pair 0 always holds the minimum count."""

    __slots__ = ("v0", "n0", "v1", "n1")

    def __init__(self, v0: str = "", n0: int = MAX_INT32, v1: str = "", n1: int = MAX_INT32) -> None:
        self.v0, self.n0, self.v1, self.n1 = v0, n0, v1, n1

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.v0, self.n0), (self.v1, self.n1)

    def update(self, value: str, num: int) -> None:
        if value == self.v0 or value == self.v1:
            if value == self.v0:
                self.n0 = num
            else:
                self.n1 = num
            if self.n0 > self.n1:
                self.v0, self.n0, self.v1, self.n1 = self.v1, self.n1, self.v0, self.n0
        elif num < self.n0:
            self.v1, self.n1 = self.v0, self.n0
            self.v0, self.n0 = value, num
        elif num < self.n1:
            self.v1, self.n1 = value, num

    def clone(self) -> "CriticalPaths":
        return CriticalPaths(self.v0, self.n0, self.v1, self.n1)


class PreFilterState:
    """Upstream ``preFilterState``: constraints (shared by clones), critical paths and
    per-domain match counts, both indexed by constraint.

    Built from a NodeTable, the counts are kept as arrays over the label codes
    (``tablecount.DomainCounts``, read-only) and turned into the per-domain dicts only
    when something reads ``tp_value_to_match_num`` (AddPod/RemovePod, the per-node
    Filter); from then on the dicts are the truth and the arrays are dropped."""

    __slots__ = ("constraints", "critical_paths", "_maps", "_arrays", "_table", "_version")

    def __init__(self, constraints: tuple[Constraint, ...], critical_paths: list[CriticalPaths],
                 tp_value_to_match_num: list[dict[str, int]] | None = None,
                 arrays: list[DomainCounts] | None = None, table: NodeTable | None = None) -> None:
        self.constraints = constraints
        self.critical_paths = critical_paths
        self._maps = tp_value_to_match_num
        self._arrays = arrays if tp_value_to_match_num is None else None
        self._table = table if self._arrays is not None else None
        self._version = table.version if table is not None else -1

    @property
    def tp_value_to_match_num(self) -> list[dict[str, int]]:
        if self._maps is None:
            assert self._arrays is not None
            self._maps = [d.as_dict() for d in self._arrays]
            self._arrays = None
            self._table = None
        return self._maps

    def arrays_for(self, table: NodeTable) -> list[DomainCounts] | None:
        """The array counts when they are still valid for ``table`` (same table, unchanged)."""
        if self._arrays is None or self._table is not table or table.version != self._version:
            return None
        return self._arrays

    def clone(self) -> "PreFilterState":
        paths = [p.clone() for p in self.critical_paths]
        if self._maps is None:
            c = PreFilterState(self.constraints, paths, None, self._arrays, None)
            c._table, c._version = self._table, self._version
            return c
        return PreFilterState(self.constraints, paths, [dict(m) for m in self._maps])

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum of constraint ``i``, 0 while domains < minDomains."""
        if self._maps is not None:
            ndomains = len(self._maps[i])
        else:
            assert self._arrays is not None
            ndomains = self._arrays[i].ndomains
        if ndomains < min_domains:
            return 0
        return self.critical_paths[i].n0


def compute_state(pod: Pod, constraints: tuple[Constraint, ...], nodes: Sequence[NodeInfo],
                  counter: MatchCounter, table: NodeTable | None = None) -> PreFilterState:
    """``calPreFilterState`` over all nodes (``constraints`` non-empty). With ``table``
    (whose rows are exactly ``nodes``) the counting is done on its columns."""
    if table is not None:
        arrays = prefilter_domain_counts(pod, constraints, table, counter)
        return PreFilterState(constraints, [CriticalPaths(*d.critical_paths()) for d in arrays],
                              None, arrays, table)
    counts: list[dict[str, int]] = [{} for _ in constraints]
    tables = [counter.table_for(pod.namespace, c.selector) for c in constraints]
    inclusion = NodeInclusion(pod)
    ns = pod.namespace
    for ni in nodes:
        node = ni.node
        if node is None or not node_has_all_keys(node.labels, constraints):
            continue
        inclusion.at(node)
        for i, c in enumerate(constraints):
            if not inclusion.admits(c):
                continue
            value = node.labels[c.topology_key]
            sel = c.selector
            n = 0 if sel.empty or sel.nothing else MatchCounter.count_in(tables[i], ni, sel, ns)
            m = counts[i]
            m[value] = m.get(value, 0) + n
    paths = []
    for m in counts:
        cp = CriticalPaths()
        for value, num in m.items():
            cp.update(value, num)
        paths.append(cp)
    return PreFilterState(constraints, paths, counts)


def update_with_pod(state: PreFilterState, updated: Pod, preemptor: Pod, node: Node | None,
                    delta: int) -> None:
    """``updateWithPod``: count ``updated`` in (+1) or out (-1) of its node's domains."""
    if updated.namespace != preemptor.namespace or node is None:
        return
    if not node_has_all_keys(node.labels, state.constraints):
        return
    inclusion = NodeInclusion(preemptor).at(node)
    for i, c in enumerate(state.constraints):
        if not c.selector.matches(updated.labels) or not inclusion.admits(c):
            continue
        value = node.labels[c.topology_key]
        m = state.tp_value_to_match_num[i]
        m[value] = m.get(value, 0) + delta
        state.critical_paths[i].update(value, m[value])


def filter_node(state: PreFilterState, pod: Pod, node: Node | None) -> Status:
    """Filter for one node."""
    labels = node.labels if node is not None else {}
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            log.debug("node %s lacks topology key %s", node.name if node else "", c.topology_key)
            return _LABEL_MISSING
        min_match = state.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod.labels) else 0
        match = state.tp_value_to_match_num[i].get(value, 0)
        if match + self_match - min_match > c.max_skew:
            log.debug("node %s fails spread constraint on %s: %d + %d - %d > %d",
                      node.name if node else "", c.topology_key, match, self_match, min_match,
                      c.max_skew)
            return _NOT_MATCH
    return SUCCESS


def domain_array(counts: dict[str, int], ids: dict[str, int], size: int) -> np.ndarray:
    """Per-domain counts indexed by the NodeTable's label codes (0 for absent domains)."""
    arr = np.zeros(max(size, 1), dtype=np.int64)
    for value, n in counts.items():
        code = ids.get(value)
        if code is not None:
            arr[code] = n
    return arr


def filter_nodes(state: PreFilterState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    """Batch Filter: True where ``filter_node`` would return Success."""
    ok = np.ones(idx.size, dtype=bool)
    arrays = state.arrays_for(table)
    for i, c in enumerate(state.constraints):
        codes, ids, values = table.label(c.topology_key)
        node_codes = codes[idx]
        present = node_codes >= 0
        if arrays is not None:
            per_domain = arrays[i].sums
        else:
            per_domain = domain_array(state.tp_value_to_match_num[i], ids, len(values))
        match = per_domain[np.where(present, node_codes, 0)]
        self_match = 1 if c.selector.matches(pod.labels) else 0
        limit = c.max_skew + state.min_match_num(i, c.min_domains) - self_match
        ok &= present & (match <= limit)
    return ok
