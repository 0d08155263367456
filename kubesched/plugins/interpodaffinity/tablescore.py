"""InterPodAffinity's PreScore summing over NodeTable columns (the fast path).

Same sums as :func:`counting.build_scores` (and so as the reference
:func:`scoring.build_scores`), but per topology key the result is an int64 array of
per-domain totals indexed by the table's label codes (with a trailing 0 for code -1,
label absent) instead of a ``{value: score}`` dict. The pod-independent counts are kept
per node row in :class:`rowcache.RowAggregate` columns:

- for a label selector and topology key: per namespace, the pods matching the selector
  on each node that has the key;
- the terms of existing pods used by scoring: per ``(kind, term, weight)``, the pods
  carrying that term on each node that has the term's topology key.

A cycle adds ``±weight × column`` for every admitted namespace / matching term into one
int64 row vector per topology key (the int32 columns are widened before the product, so
nothing overflows), then sums rows into domains by label code. A topology key
is present in the result exactly when the dict form would have it: when some matching
count was added (even if the sums cancel out).

The columns live within the memory budget of :mod:`rowcache` (``MAX_CELLS``); once it is
exceeded, :func:`build_totals` drops them and returns ``None`` from then on, and the caller
uses the dict path (``counting.build_scores``).
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
from kubesched.plugins.interpodaffinity import rowcache
from kubesched.plugins.interpodaffinity.rowcache import (
    CellBudget, OverBudget, RowAggregateCache, RowContribution,
)
from kubesched.plugins.interpodaffinity.scoring import _Accumulator

log = logging.getLogger(__name__)


DomainTotals = dict[str, np.ndarray]
Group = tuple[int, int, int]  # (kind, term id, weight) of an existing pod's scoring term


class RowCaches:
    """The plugin instance's row aggregates; ``term_id`` interns existing pods' terms.
    ``enabled`` turns False for good once the columns went over the cell budget."""

    def __init__(self, term_id: Callable[[PodAffinityTerm], int], terms: list[PodAffinityTerm]) -> None:
        self.budget = CellBudget()
        self.selector = RowAggregateCache(self.budget)
        self.existing = RowAggregateCache(self.budget, 1)
        self._term_id = term_id
        self.terms = terms
        self.enabled = True
        # The existing aggregate's groups by term id, and the term ids by a label an
        # incoming pod must carry to match the term (its first In requirement): a cycle
        # looks only at the terms that can select its pod, not at every group.
        self._groups: dict[int, set[Group]] = {}
        self._by_label: dict[tuple[str, str], list[int]] = {}
        self._unindexed: list[int] = []  # terms without an In requirement

    @property
    def cells(self) -> int:
        """Cells held by all the columns."""
        return self.budget.cells

    def drop(self, why: str) -> None:
        """Free every column and stop using the table path."""
        self.selector.clear()
        self.existing.clear()
        self.enabled = False
        log.info("InterPodAffinity: per-node count columns over budget (%s, MAX_CELLS=%d); "
                 "dropped them, scoring on the per-domain dict path from now on", why, rowcache.MAX_CELLS)

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
    """Per topology key, the row vector being summed."""

    def __init__(self) -> None:
        self.by_key: dict[str, np.ndarray] = {}

    def add(self, key: str, delta: int, col: np.ndarray) -> None:
        """``row[key] += delta * col`` in int64 (``col`` may be a narrower int column)."""
        r = self.by_key.get(key)
        if r is None:
            self.by_key[key] = np.multiply(col, delta, dtype=np.int64)
        elif delta == 1:
            r += col  # int64 += int32 widens element-wise
        else:
            r += np.multiply(col, delta, dtype=np.int64)


def build_totals(rc: RowCaches, pod: Pod, table: NodeTable, objects: ClusterObjects,
                 hard_weight: int) -> DomainTotals | None:
    """Per topology key the per-domain totals (indexed by label code, trailing 0); ``None``
    when the columns are (or just went) over the cell budget: use the dict path."""
    if not rc.enabled:
        return None
    try:
        return _build_totals(rc, pod, table, objects, hard_weight)
    except OverBudget as e:
        rc.drop(str(e))
        return None


def _build_totals(rc: RowCaches, pod: Pod, table: NodeTable, objects: ClusterObjects,
                  hard_weight: int) -> DomainTotals:
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
    out: DomainTotals = {}
    for key, r in rows.by_key.items():
        codes, _, values = table.label(key)
        tot = np.zeros(len(values) + 1, np.int64)
        np.add.at(tot, codes, r)  # rows without the label carry 0 (and map to the trailing slot)
        tot[-1] = 0
        out[key] = tot
    log.debug("pod %s: %d topology keys scored", pod.key, len(out))
    return out
