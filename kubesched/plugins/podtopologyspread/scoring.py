"""PreScore / Score / NormalizeScore of PodTopologySpread (upstream ``scoring.go``).

PreScore takes the soft (ScheduleAnyway) constraints, marks filtered nodes lacking a
topology key as ignored (only when the pod has its own constraints or the defaults are not
the system ones), collects the domains of the filtered nodes, weighs each constraint by
``log(number of domains + 2)`` (for hostname: the number of scored nodes) and counts the
matching pods of every node in the cluster into those domains. Hostname constraints are
counted per node at Score time.

Score = round(sum over constraints whose key the node has of
``count * weight + (maxSkew - 1)``); NormalizeScore maps it to
``100 * (max + min - score) / max`` (100 for all when max is 0), ignored nodes get 0.
All float64 arithmetic is in upstream's order; ``log`` and ``Round`` are Go's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.podtopologyspread.common import (
    Constraint, MatchCounter, NodeInclusion, go_log, go_round, node_has_all_keys,
)
from kubesched.plugins.podtopologyspread.filtering import domain_array
from kubesched.plugins.podtopologyspread.tablecount import prescore_counts

log = logging.getLogger(__name__)

INVALID_SCORE = -1
MAX_INT64 = 2**63 - 1


@dataclass(slots=True)
class PreScoreState:
    """Upstream ``preScoreState``. Not changed after PreScore, so clones share it."""

    constraints: tuple[Constraint, ...]
    ignored_nodes: set[str] = field(default_factory=set)
    topology_value_to_pod_counts: list[dict[str, int]] = field(default_factory=list)
    topology_normalizing_weight: list[float] = field(default_factory=list)

    def clone(self) -> "PreScoreState":
        return self


def topology_normalizing_weight(size: int) -> float:
    return go_log(float(size + 2))


def score_for_count(cnt: int, max_skew: int, weight: float) -> float:
    return float(cnt) * weight + float(max_skew - 1)


def compute_state(pod: Pod, constraints: tuple[Constraint, ...], filtered: Sequence[NodeInfo],
                  all_nodes: Sequence[NodeInfo], require_all: bool,
                  counter: MatchCounter, table: NodeTable | None = None,
                  rows: np.ndarray | None = None) -> PreScoreState:
    """``initPreScoreState`` plus the counting over all nodes (``constraints`` non-empty).
    With ``table`` (rows exactly ``all_nodes``) and ``rows`` (the rows of ``filtered``)
    the counting is done on the table's columns."""
    s = PreScoreState(constraints)
    if table is not None and rows is not None:
        ignored, s.topology_value_to_pod_counts, sizes = prescore_counts(
            pod, constraints, table, rows, require_all, counter)
        s.ignored_nodes = {table.names[j] for j in ignored.tolist()}
        for i, c in enumerate(constraints):
            size = len(filtered) - len(s.ignored_nodes) if c.is_hostname else sizes[i]
            s.topology_normalizing_weight.append(topology_normalizing_weight(size))
        return s
    counts: list[dict[str, int]] = [{} for _ in constraints]
    topo_size = [0] * len(constraints)
    for ni in filtered:
        node = ni.node
        if node is None:
            continue
        if require_all and not node_has_all_keys(node.labels, constraints):
            s.ignored_nodes.add(node.name)
            continue
        for i, c in enumerate(constraints):
            if c.is_hostname:
                continue
            value = node.labels.get(c.topology_key, "")
            if value not in counts[i]:
                counts[i][value] = 0
                topo_size[i] += 1
    for i, c in enumerate(constraints):
        size = len(filtered) - len(s.ignored_nodes) if c.is_hostname else topo_size[i]
        s.topology_normalizing_weight.append(topology_normalizing_weight(size))
    inclusion = NodeInclusion(pod)
    tables = [counter.table_for(pod.namespace, c.selector) for c in constraints]
    for ni in all_nodes:
        node = ni.node
        if node is None or (require_all and not node_has_all_keys(node.labels, constraints)):
            continue
        inclusion.at(node)
        for i, c in enumerate(constraints):
            if not inclusion.admits(c):
                continue
            value = node.labels.get(c.topology_key, "")
            m = counts[i]
            if value not in m:
                continue
            sel = c.selector
            if not (sel.empty or sel.nothing):
                m[value] += MatchCounter.count_in(tables[i], ni, sel, pod.namespace)
    s.topology_value_to_pod_counts = counts
    return s


def score_node(s: PreScoreState, pod: Pod, ni: NodeInfo, counter: MatchCounter) -> int:
    node = ni.node
    if node is None or node.name in s.ignored_nodes:
        return 0
    score = 0.0
    for i, c in enumerate(s.constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            continue
        if c.is_hostname:
            cnt = counter.count(ni, c.selector, pod.namespace)
        else:
            cnt = s.topology_value_to_pod_counts[i].get(value, 0)
        score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
    return int(go_round(score))


def score_nodes(s: PreScoreState, pod: Pod, table: NodeTable, idx: np.ndarray,
                counter: MatchCounter) -> np.ndarray:
    """Batch Score over NodeTable rows ``idx``: same float64 operations, per node."""
    score = np.zeros(idx.size, dtype=np.float64)
    for i, c in enumerate(s.constraints):
        codes, ids, values = table.label(c.topology_key)
        node_codes = codes[idx]
        present = node_codes >= 0
        if c.is_hostname:
            cnt = _per_node_counts(table, idx, present, c, pod.namespace, counter)
        else:
            per_domain = domain_array(s.topology_value_to_pod_counts[i], ids, len(values))
            cnt = per_domain[np.where(present, node_codes, 0)]
        term = cnt.astype(np.float64) * s.topology_normalizing_weight[i] + float(c.max_skew - 1)
        score = np.where(present, score + term, score)
    rounded = np.trunc(score)
    rounded += np.where(np.abs(score - rounded) >= 0.5, np.copysign(1.0, score), 0.0)
    out = rounded.astype(np.int64)
    if s.ignored_nodes:
        ignored = np.fromiter((table.names[j] in s.ignored_nodes for j in idx.tolist()),
                              dtype=bool, count=idx.size)
        out[ignored] = 0
    return out


def _per_node_counts(table: NodeTable, idx: np.ndarray, present: np.ndarray, c: Constraint,
                     namespace: str, counter: MatchCounter) -> np.ndarray:
    """Matching pods on each node of ``idx`` (0 where the node lacks the key), from the
    per-row counts ``counter`` keeps up to date incrementally."""
    sel = c.selector
    if sel.empty or sel.nothing:
        return np.zeros(idx.size, dtype=np.int64)
    return np.where(present, counter.counts_array(table, namespace, sel)[idx], 0)


def normalize(s: PreScoreState, names: Sequence[str], scores: np.ndarray) -> None:
    """NormalizeScore, in place (int64 arithmetic; all operands are non-negative)."""
    if s.ignored_nodes:
        ignored = np.fromiter((n in s.ignored_nodes for n in names), dtype=bool, count=len(names))
    else:
        ignored = np.zeros(len(names), dtype=bool)
    valid = scores[~ignored]
    min_score = int(valid.min()) if valid.size else MAX_INT64
    max_score = max(int(valid.max()), 0) if valid.size else 0
    if max_score == 0:
        scores[:] = MAX_NODE_SCORE
    else:
        scores[:] = MAX_NODE_SCORE * (max_score + min_score - scores) // max_score
    scores[ignored] = 0
