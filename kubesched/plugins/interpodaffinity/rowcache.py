"""Per-node counts kept as NumPy columns aligned with the NodeTable's rows.

:class:`nodecache.NodeAggregate` sums per-node contributions into ``{domain: count}``
dicts, which every scheduling cycle then has to walk in Python (thousands of domains for
a hostname topology key). :class:`RowAggregate` keeps the same per-node contributions,
``{group: count}``, as one int32 column per group over the table's rows instead, so that
a cycle combines whole columns with NumPy and turns rows into topology domains with one
gather over the table's label codes. int32 is enough for a count of pods on one node;
readers widen to int64 before multiplying by a weight or summing columns (see
``tablescore``).

The contribution of a node is recomputed only when its NodeInfo generation moved: the
table's change log says which rows to look at when the same table is seen again; a new
table (nodes added or removed) re-scatters the cached per-node contributions (by node
name, recomputing only the changed ones) into fresh columns.

Memory budget. The columns are dense: a group costs one cell per node row, whether or not
its pods are on that node, where the dict form holds only the domains with pods. All the
aggregates of one plugin instance share a :class:`CellBudget` of :data:`MAX_CELLS` cells
(16M cells = 64 MB at int32) for all their columns together; a column is only allocated
after the budget admitted it, so the columns never hold more than ``MAX_CELLS`` cells.
When a column would exceed it, :class:`OverBudget` is raised and the owner
(``tablescore.RowCaches``) drops every aggregate (freeing the arrays) and the plugin uses
the dict path (``counting.build_scores``, exact as well) for the rest of the plugin
instance's life: it does not switch back, which keeps the behaviour simple and avoids
flapping between the two forms around the limit. The switch is logged once at INFO.
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

#: Budget, in cells, for all the RowAggregate columns of one plugin instance together.
MAX_CELLS = 16_000_000

#: Column dtype: a per-node pod count (a node never holds 2**31 pods).
COL_DTYPE = np.int32

_EMPTY: RowContribution = {}


class OverBudget(Exception):
    """Allocating one more column would take the columns past :data:`MAX_CELLS`."""


class CellBudget:
    """Cells held by the columns of the aggregates sharing it (checked against
    :data:`MAX_CELLS`, read at each allocation)."""

    __slots__ = ("cells",)

    def __init__(self) -> None:
        self.cells = 0

    def take(self, n: int) -> None:
        if self.cells + n > MAX_CELLS:
            raise OverBudget(f"{self.cells} + {n} cells > {MAX_CELLS}")
        self.cells += n

    def give(self, n: int) -> None:
        self.cells -= n


class RowAggregate:
    """``cols[group][row]``: the contribution of row ``row``'s node to ``group``;
    ``sums[group]`` the column's total. Groups whose total drops to 0 are dropped."""

    __slots__ = ("_budget", "_contrib", "_entries", "_rows", "_sparse", "_table", "_version", "cols", "sums")

    def __init__(self, contrib: Callable[[NodeInfo], RowContribution], budget: CellBudget,
                 sparse: Callable[[NodeTable], Iterable[int] | None] | None = None) -> None:
        self._budget = budget
        self._contrib = contrib
        # the rows whose contribution may be non-empty (a superset), when cheaper to know
        # than to ask every row; None: ask every row
        self._sparse = sparse
        self._entries: dict[str, tuple[int, RowContribution]] = {}
        self._rows: list[RowContribution] = []
        self._table: NodeTable | None = None
        self._version = -1
        self.cols: dict[Any, np.ndarray] = {}
        self.sums: dict[Any, int] = {}

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
        cols, sums = self.cols, self.sums
        for g, v in c.items():
            col = cols.get(g)
            if col is None:
                self._budget.take(len(self._rows))
                col = cols[g] = np.zeros(len(self._rows), COL_DTYPE)
                sums[g] = 0
            col[row] += sign * v
            n = sums[g] + sign * v
            if n == 0:
                del cols[g], sums[g]
                self._budget.give(len(self._rows))
            else:
                sums[g] = n

    @property
    def cells(self) -> int:
        return len(self.cols) * len(self._rows)

    def release(self) -> None:
        """Free the columns (and their cells in the budget); the next sync rebuilds."""
        self._budget.give(self.cells)
        self._table = None
        self._rows = []
        self.cols = {}
        self.sums = {}

    def _rebuild(self, table: NodeTable) -> None:
        self.release()
        self._table = table
        self._rows = [_EMPTY] * table.size
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

    def sync(self, table: NodeTable) -> dict[Any, np.ndarray]:
        """Bring the columns up to date with ``table`` and return them (do not mutate them).

        Raises :class:`OverBudget` (leaving this aggregate unusable: release it) when a new
        column would not fit in the budget."""
        changed = table.changed_since(self._version) if table is self._table else None
        if changed is None:
            self._rebuild(table)
        else:
            infos = table.infos
            for i in changed.tolist():
                old = self._rows[i]
                c = self._entry(infos[i])
                if c is not old:
                    self._put(i, old, -1)
                    self._put(i, c, 1)
                    self._rows[i] = c
        self._version = table.version
        return self.cols


class RowAggregateCache:
    """A few :class:`RowAggregate` by signature, the least recently used evicted."""

    def __init__(self, budget: CellBudget, limit: int = 32) -> None:
        self._budget = budget
        self._limit = limit
        self._items: dict[Hashable, RowAggregate] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, sig: Hashable, contrib: Callable[[NodeInfo], RowContribution],
            sparse: Callable[[NodeTable], Iterable[int] | None] | None = None) -> RowAggregate:
        agg = self._items.pop(sig, None)
        if agg is None:
            agg = RowAggregate(contrib, self._budget, sparse)
            if len(self._items) >= self._limit:
                self._items.pop(next(iter(self._items))).release()
        self._items[sig] = agg
        return agg

    def clear(self) -> None:
        """Release every aggregate."""
        for agg in self._items.values():
            agg.release()
        self._items.clear()
