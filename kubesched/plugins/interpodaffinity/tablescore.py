"""InterPodAffinity's PreScore summing over NodeTable rows (the fast path).

Same sums as :func:`counting.build_scores` (and so as the reference
:func:`scoring.build_scores`), but per topology key the result is an int64 array of
per-domain totals indexed by the table's label codes (with a trailing 0 for code -1,
label absent) instead of a ``{value: score}`` dict. The pod-independent counts are kept
per node row in :class:`rowcache.RowAggregate` sparse columns (only rows with counted pods):

- for a label selector and topology key: per namespace, the pods matching the selector
  on each node that has the key;
- the terms of existing pods used by scoring: per ``(kind, term, weight)``, the pods
  carrying that term on each node that has the term's topology key.

A cycle collects ``±weight × column`` for every admitted namespace / matching term per
topology key (int64: nothing overflows), then sums those rows into domains by label code
in one ``np.add.at``. A topology key is present in the result exactly when the dict form
would have it: when some matching count was added (even if the sums cancel out). The
work is proportional to the rows holding counted pods, not to the cluster's size.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from kubesched.api.objects import Pod, PodAffinityTerm
from kubesched.framework.interface import ClusterObjects
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity.common import existing_scoring_terms
from kubesched.plugins.interpodaffinity.rowcache import RowAggregateCache, RowContribution, SparseColumn
from kubesched.plugins.interpodaffinity.scoring import _Accumulator

log = logging.getLogger(__name__)


DomainTotals = dict[str, np.ndarray]
Group = tuple[int, int, int]  # (kind, term id, weight) of an existing pod's scoring term


class RowCaches:
    """The plugin instance's row aggregates; ``term_id`` interns existing pods' terms."""

    def __init__(self, term_id: Callable[[PodAffinityTerm], int], terms: list[PodAffinityTerm]) -> None:
        self.selector = RowAggregateCache()
        self.existing = RowAggregateCache(1)
        self._term_id = term_id
        self.terms = terms
        # The existing aggregate's groups by term id, and the term ids by a label an
        # incoming pod must carry to match the term (its first In requirement): a cycle
        # looks only at the terms that can select its pod, not at every group.
        self._groups: dict[int, set[Group]] = {}
        self._by_label: dict[tuple[str, str], list[int]] = {}
        self._unindexed: list[int] = []  # terms without an In requirement

    @property
    def cells(self) -> int:
        """Entries held by all the columns."""
        return sum(agg.cells for c in (self.selector, self.existing) for agg in c._items.values())

    def existing_contrib(self, ni: NodeInfo) -> RowContribution:
        assert ni.node is not None
        labels = ni.node.labels
        out: RowContribution = {}
        term_id = self._term_id
        for ep in ni.pods_with_affinity:
            for kind, t, weight in existing_scoring_terms(ep):
                if t.topology_key in labels:
                    tid = term_id(t)
                    g = (kind, tid, weight)
                    if g not in out:
                        self._file(tid, g)
                    out[g] = out.get(g, 0) + 1
        return out

    def _file(self, tid: int, g: Group) -> None:
        groups = self._groups.get(tid)
        if groups is None:
            groups = self._groups[tid] = set()
            sel = self.terms[tid].selector
            anchor = next((r for r in sel.requirements if r.operator == "In"), None)
            if sel.nothing:
                pass  # matches no pod: never a candidate
            elif anchor is None:
                self._unindexed.append(tid)
            else:
                for v in anchor.values:
                    self._by_label.setdefault((anchor.key, v), []).append(tid)
        groups.add(g)

    def candidate_groups(self, pod: Pod) -> Iterator[Group]:
        """The existing aggregate's groups whose term may select ``pod`` (a superset of
        those that do), each once."""
        tids = set(self._unindexed)
        by_label = self._by_label
        for kv in pod.labels.items():
            found = by_label.get(kv)
            if found is not None:
                tids.update(found)
        for tid in sorted(tids):
            yield from self._groups[tid]


def _selector_contrib(selector: Any, key: str) -> Any:
    def contrib(ni: NodeInfo) -> RowContribution:
        assert ni.node is not None
        out: RowContribution = {}
        if key not in ni.node.labels:
            return out
        for p in ni.pods:
            if selector.matches(p.labels):
                out[p.namespace] = out.get(p.namespace, 0) + 1
        return out
    return contrib


def _selector_rows(selector: Any) -> Callable[[NodeTable], Iterable[int] | None]:
    """The rows holding pods that may match ``selector`` (the table's pod label index)."""
    def rows(table: NodeTable) -> Iterable[int] | None:
        if selector.nothing:
            return ()
        cands = table.pod_index().candidates(selector)
        return None if cands is None else sorted(cands)
    return rows


class _Rows:
    """Per topology key, the (rows, signed counts) pairs being summed."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}

    def add(self, key: str, delta: int, col: SparseColumn) -> None:
        """Add ``delta * col`` (int64) to the sum for ``key``."""
        rows, vals = col.arrays()
        part = (rows, vals if delta == 1 else vals * delta)
        parts = self.by_key.get(key)
        if parts is None:
            self.by_key[key] = [part]
        else:
            parts.append(part)

    def totals(self, table: NodeTable) -> DomainTotals:
        """Per key the sums by domain: indexed by the label's codes, trailing 0."""
        out: DomainTotals = {}
        for key, parts in self.by_key.items():
            codes, _, values = table.label(key)
            if len(parts) == 1:
                rows, vals = parts[0]
            else:
                rows = np.concatenate([r for r, _ in parts])
                vals = np.concatenate([v for _, v in parts])
            tot = np.zeros(len(values) + 1, np.int64)
            np.add.at(tot, codes[rows], vals)  # rows without the label map to the trailing slot
            tot[-1] = 0
            out[key] = tot
        return out


def build_totals(rc: RowCaches, pod: Pod, table: NodeTable, objects: ClusterObjects,
                 hard_weight: int) -> DomainTotals:
    """Per topology key the per-domain totals (indexed by label code, trailing 0)."""
    acc = _Accumulator(pod, objects, hard_weight)
    rows = _Rows()
    for it, delta in acc.signed_preferred():
        key = it.topology_key
        agg = rc.selector.get((it.selector, key), _selector_contrib(it.selector, key),
                              _selector_rows(it.selector))
        cols = agg.sync(table)
        for ns, col in cols.items():
            if it.admits(ns):
                rows.add(key, delta, col)
    agg = rc.existing.get(None, rc.existing_contrib)
    cols = agg.sync(table)
    for g in rc.candidate_groups(pod):
        tcol = cols.get(g)
        if tcol is None:
            continue  # no pod carries that term now
        kind, tid, w = g
        weight = acc.existing_delta(kind, w)
        t = rc.terms[tid]
        if weight is not None and acc.existing_matches(tid, t):
            rows.add(t.topology_key, weight, tcol)
    out = rows.totals(table)
    log.debug("pod %s: %d topology keys scored", pod.key, len(out))
    return out
