"""Per-node counts kept as sparse columns over the NodeTable's rows.

:class:`nodecache.NodeAggregate` sums per-node contributions into ``{domain: count}``
dicts, which every scheduling cycle then has to walk in Python (thousands of domains for
a hostname topology key). :class:`RowAggregate` keeps the same per-node contributions,
``{group: count}``, per group as a :class:`SparseColumn` over the table's rows instead: only
the rows whose node holds a counted pod are stored, so that a cycle turns a group into
topology domains with one gather over the table's label codes of those rows (see
``tablescore``), and a cluster of 50,000 nodes with a thousand groups, each on a few nodes,
holds a few thousand cells rather than fifty million.

The contribution of a node is recomputed only when its NodeInfo generation moved: the
table's change log says which rows to look at when the same table is seen again; a new
table (nodes added or removed) re-files the cached per-node contributions (by node name,
recomputing only the changed ones) into fresh columns.

Memory: a column holds one entry per row with a counted pod, and a pod is counted in a
group at most once, so the columns together hold no more entries than there are (pod,
group) pairs, as the dict form does. There is no budget to fall back from.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo

log = logging.getLogger(__name__)

RowContribution = dict[Any, int]

_EMPTY: RowContribution = {}


class SparseColumn:
    """One group's counts: ``counts[row]`` for the rows where it is not 0, their ``total``,
    and, built on first read, the same as two int64 arrays sorted by row.

    Once built, the arrays are kept and patched on the next read with the rows that changed
    since (a bind changes one row): a binary search per changed row and a copy of the arrays,
    rather than sorting every entry again, which for a group counted on thousands of rows
    (every pod of a preferred-affinity workload in one group) cost more than the whole cycle."""

    __slots__ = ("counts", "total", "_arrays", "_changed")

    #: More changed rows than this since the last read: rebuild the arrays from ``counts``.
    PATCH_LIMIT = 32

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.total = 0
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None
        self._changed: set[int] = set()

    def add(self, row: int, v: int) -> None:
        n = self.counts.get(row, 0) + v
        if n:
            self.counts[row] = n
        else:
            del self.counts[row]
        self.total += v
        if self._arrays is not None:
            self._changed.add(row)
            if len(self._changed) > self.PATCH_LIMIT:
                self._arrays = None
                self._changed.clear()

    def _build(self) -> tuple[np.ndarray, np.ndarray]:
        items = sorted(self.counts.items())
        rows = np.fromiter((r for r, _ in items), np.int64, len(items))
        vals = np.fromiter((c for _, c in items), np.int64, len(items))
        return rows, vals

    def _patch(self, rows: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vals = vals.copy()  # the old arrays may still be referenced by a reader
        for r in sorted(self._changed):
            i = int(np.searchsorted(rows, r))
            present = i < len(rows) and int(rows[i]) == r
            c = self.counts.get(r, 0)
            if present and c:
                vals[i] = c
            elif present:
                rows = np.delete(rows, i)
                vals = np.delete(vals, i)
            elif c:
                rows = np.insert(rows, i, r)
                vals = np.insert(vals, i, c)
        return rows, vals

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, counts)``, int64, rows ascending (do not mutate them)."""
        a = self._arrays
        if a is not None and not self._changed:
            return a
        rows, vals = self._build() if a is None else self._patch(*a)
        self._changed.clear()
        rows.flags.writeable = False
        vals.flags.writeable = False
        a = self._arrays = (rows, vals)
        return a

    def dense(self, size: int) -> np.ndarray:
        """The column over ``size`` rows (for tests and debugging)."""
        out = np.zeros(size, np.int64)
        rows, vals = self.arrays()
        out[rows] = vals
        return out


class RowAggregate:
    """``cols[group]``: per row the contribution of the row's node to ``group``. Groups whose
    total drops to 0 are dropped."""

    __slots__ = ("_contrib", "_entries", "_rows", "_sparse", "_table", "_version", "cols")

    def __init__(self, contrib: Callable[[NodeInfo], RowContribution],
                 sparse: Callable[[NodeTable], Iterable[int] | None] | None = None) -> None:
        self._contrib = contrib
        # the rows whose contribution may be non-empty (a superset), when cheaper to know
        # than to ask every row; None: ask every row
        self._sparse = sparse
        self._entries: dict[str, tuple[int, RowContribution]] = {}
        self._rows: dict[int, RowContribution] = {}  # rows with a non-empty contribution
        self._table: NodeTable | None = None
        self._version = -1
        self.cols: dict[Any, SparseColumn] = {}

    def _entry(self, ni: NodeInfo) -> RowContribution:
        node = ni.node
        if node is None:
            return _EMPTY
        old = self._entries.get(node.name)
        if old is not None and old[0] == ni.generation:
            return old[1]
        c = self._contrib(ni)
        self._entries[node.name] = (ni.generation, c)
        return c

    def _put(self, row: int, c: RowContribution, sign: int) -> None:
        cols = self.cols
        for g, v in c.items():
            col = cols.get(g)
            if col is None:
                col = cols[g] = SparseColumn()
            col.add(row, sign * v)
            if col.total == 0:
                del cols[g]

    @property
    def cells(self) -> int:
        """Entries held by all the columns."""
        return sum(len(c.counts) for c in self.cols.values())

    def release(self) -> None:
        """Free the columns; the next sync rebuilds."""
        self._table = None
        self._rows = {}
        self.cols = {}

    def _rebuild(self, table: NodeTable) -> None:
        self.release()
        self._table = table
        rows = self._sparse(table) if self._sparse is not None else None
        if rows is not None:
            self._rebuild_sparse(table, rows)
            return
        live: set[str] = set()
        for i, ni in enumerate(table.infos):
            c = self._entry(ni)
            if ni.node is not None:
                live.add(ni.node.name)
            if c:
                self._rows[i] = c
                self._put(i, c, 1)
        if len(live) != len(self._entries):
            for name in [n for n in self._entries if n not in live]:
                del self._entries[name]

    def _rebuild_sparse(self, table: NodeTable, rows: Iterable[int]) -> None:
        """``_rebuild`` asking only ``rows``; the others contribute nothing. Cached entries
        of other nodes are dropped (a later change of those rows recomputes them)."""
        infos = table.infos
        keep: dict[str, tuple[int, RowContribution]] = {}
        for i in rows:
            ni = infos[i]
            c = self._entry(ni)
            if ni.node is not None:
                keep[ni.node.name] = self._entries[ni.node.name]
            if c:
                self._rows[i] = c
                self._put(i, c, 1)
        self._entries = keep

    def sync(self, table: NodeTable) -> dict[Any, SparseColumn]:
        """Bring the columns up to date with ``table`` and return them (do not mutate them)."""
        changed = table.changed_since(self._version) if table is self._table else None
        if changed is None:
            self._rebuild(table)
        else:
            infos = table.infos
            rows = self._rows
            for i in changed.tolist():
                old = rows.get(i, _EMPTY)
                c = self._entry(infos[i])
                if c is not old:
                    self._put(i, old, -1)
                    self._put(i, c, 1)
                    if c:
                        rows[i] = c
                    else:
                        rows.pop(i, None)
        self._version = table.version
        return self.cols


class RowAggregateCache:
    """A few :class:`RowAggregate` by signature, the least recently used evicted."""

    def __init__(self, limit: int = 32) -> None:
        self._limit = limit
        self._items: dict[Hashable, RowAggregate] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, sig: Hashable, contrib: Callable[[NodeInfo], RowContribution],
            sparse: Callable[[NodeTable], Iterable[int] | None] | None = None) -> RowAggregate:
        agg = self._items.pop(sig, None)
        if agg is None:
            agg = RowAggregate(contrib, sparse)
            if len(self._items) >= self._limit:
                self._items.pop(next(iter(self._items))).release()
        self._items[sig] = agg
        return agg

    def clear(self) -> None:
        """Release every aggregate."""
        for agg in self._items.values():
            agg.release()
        self._items.clear()
