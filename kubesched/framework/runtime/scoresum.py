"""The weighted sum of node-local plugins' cached scores, kept per row, with its best rows.

A node-local plugin's score on a row depends only on the pod's signature and that row
(:class:`~kubesched.framework.runtime.outcome.SignatureCache` keeps them). Pods of one kind are
scored by the same few such plugins, so their weighted sum is itself a per-row value: it
is kept here, per combination of (plugin cache entry, weight), and only the rows the
table's change log names are re-added, as the plugins' own caches do. Adding the columns
again every cycle is a pass over every node per plugin: at 100,000 nodes those passes,
not the scoring, were the cycle's cost.

The rows holding the highest sum are kept too (sorted, as the scheduler visits them), so
the host can be chosen among them without a pass over the column: binding a pod changes
one row, which leaves the set, joins it or raises the maximum; only when the set empties
is the column reduced again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.runtime.outcome import CacheEntry

I64 = np.int64


class _Top:
    """The highest sum over some rows (every row, or the rows of ``within``) and the rows
    holding it, ascending; ``rows`` None until asked for, or after the set emptied."""

    __slots__ = ("within", "member", "top", "rows")

    def __init__(self, within: np.ndarray | None, size: int) -> None:
        self.within = within  # held: its identity is the key
        self.member: np.ndarray | None = None
        if within is not None:
            self.member = np.zeros(size, bool)
            self.member[within] = True
        self.top = 0
        self.rows: np.ndarray | None = None

    def update(self, rows: list[int], values: list[int]) -> None:
        top, best, member = self.top, self.rows, self.member
        if best is None:
            return
        for r, v in zip(rows, values):
            if member is not None and not member[r]:
                continue
            pos = int(np.searchsorted(best, r))
            present = pos < best.size and int(best[pos]) == r
            if v > top:
                top, best = v, np.array([r], np.intp)
            elif v == top:
                if not present:
                    best = np.insert(best, pos, r)
            elif present:
                best = np.delete(best, pos)
        self.top = top
        self.rows = best if best.size else None

    def best(self, arr: np.ndarray) -> np.ndarray:
        if self.rows is None:
            if self.within is None:
                self.top = int(arr.max())
                self.rows = np.flatnonzero(arr == self.top)
            else:
                values = arr[self.within]
                self.top = int(values.max())
                self.rows = self.within[values == self.top]
        return self.rows


class ScoreSum:
    """``const + sum(weight * entry.arr)`` for every row of ``table``, and its best rows
    (``const``: what plugins that give every row one score add), over every row or over
    the few row sets (a filter's passing rows, kept by identity) asked for."""

    MAX_SUBSETS = 4

    __slots__ = ("table", "const", "version", "arr", "_tops")

    def __init__(self, table: NodeTable, parts: Sequence[tuple[CacheEntry, int]], const: int = 0) -> None:
        self.table = table
        self.const = const
        self.arr = _weighted(parts, None, const)
        self.version = table.version
        self._tops: dict[int, _Top] = {}

    def refresh(self, parts: Sequence[tuple[CacheEntry, int]]) -> None:
        """Bring the sum up to the table's version; ``parts`` are current there."""
        changed = self.table.changed_since(self.version)
        if changed is None:
            self.arr = _weighted(parts, None, self.const)
            self._tops.clear()
        elif changed.size:
            values = _weighted(parts, changed, self.const)
            self.arr[changed] = values
            if self._tops:
                rows, vals = changed.tolist(), values.tolist()
                for t in self._tops.values():
                    t.update(rows, vals)
        self.version = self.table.version

    def best_rows(self, within: np.ndarray | None = None) -> np.ndarray:
        """The rows with the highest sum, ascending: among every row (the table must have
        rows), or among the rows of ``within`` (ascending, not empty, never modified)."""
        key = -1 if within is None else id(within)
        t = self._tops.get(key)
        if t is None or t.within is not within:
            t = self._tops[key] = _Top(within, self.table.size)
            if len(self._tops) > self.MAX_SUBSETS + 1:
                del self._tops[next(k for k in self._tops if k != key)]
        return t.best(self.arr)


def _weighted(parts: Sequence[tuple[CacheEntry, int]], rows: np.ndarray | None, const: int) -> np.ndarray:
    out: np.ndarray | None = None
    for entry, w in parts:
        col = entry.arr if rows is None else entry.arr[rows]
        if w != 1:
            col = col * w
        if out is None:
            out = col.astype(I64, copy=True)
        else:
            out += col
    assert out is not None
    if const:
        out += const
    return out


class ScoreSums:
    """A few :class:`ScoreSum` by their parts' cache keys and weights (least recently used go)."""

    MAX_ENTRIES = 16

    def __init__(self) -> None:
        self._entries: OrderedDict[Hashable, ScoreSum] = OrderedDict()

    def get(self, table: NodeTable, parts: Sequence[tuple[CacheEntry, int]], const: int = 0) -> ScoreSum:
        """``const`` + the sum of ``parts`` (each current at the table's version), current too."""
        key = (tuple((entry.key, w) for entry, w in parts), const)
        s = self._entries.get(key)
        if s is None or s.table is not table:
            s = self._entries[key] = ScoreSum(table, parts, const)
            if len(self._entries) > self.MAX_ENTRIES:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
            s.refresh(parts)
        return s
