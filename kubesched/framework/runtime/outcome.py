"""Helpers of the Framework's batch execution: the rows' node names built only when read,
the per-signature result cache of node-local plugins, and the outcome of filtering.

Kept apart from :mod:`.runtime` so the runtime reads as upstream's framework.go does:
one method per extension point.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import Status


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``: a cache's array handed out without copying it."""
    view = a.view()
    view.flags.writeable = False
    return view


class RowNames(Sequence[str]):
    """The node names of NodeTable rows ``idx``, built only if a plugin reads them."""

    __slots__ = ("_names", "_idx", "_list")

    def __init__(self, names: list[str], idx: np.ndarray) -> None:
        self._names = names
        self._idx = idx
        self._list: list[str] | None = None

    def _materialize(self) -> list[str]:
        if self._list is None:
            names = self._names
            self._list = [names[i] for i in self._idx.tolist()]
        return self._list

    def __getitem__(self, i: Any) -> Any:
        return self._materialize()[i]

    def __len__(self) -> int:
        return int(self._idx.size)

    def __iter__(self) -> Any:
        return iter(self._materialize())


class CacheEntry:
    """One plugin's results for every row of ``table``, current at change-log position
    ``version``, and how many of them are non-zero (true, for a Filter): kept as rows are
    recomputed, so "every row passes" or "every score is 0" needs no pass over the column."""

    __slots__ = ("key", "table", "version", "arr", "nonzero", "_split")

    def __init__(self, key: Hashable, table: NodeTable, arr: np.ndarray) -> None:
        self.key = key
        self.table = table
        self.version = table.version
        self.arr = arr
        self.nonzero = int(np.count_nonzero(arr))
        self._split: tuple[np.ndarray, np.ndarray] | None = None

    def refresh(self, rows: np.ndarray | None, values: np.ndarray) -> None:
        """``values`` are the results of ``rows`` (None: of every row), now current."""
        if rows is None:
            self.arr[:] = values
            self.nonzero = int(np.count_nonzero(self.arr))
            self._split = None
        elif rows.size:
            old = self.arr[rows]
            if self._split is not None and not np.array_equal(old, values):
                self._split = None
            self.nonzero += int(np.count_nonzero(values)) - int(np.count_nonzero(old))
            self.arr[rows] = values
        self.version = self.table.version

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows whose result is true, rows whose result is false), ascending and read-only;
        kept until a result changes (a filter's verdicts rarely do when a pod binds)."""
        if self._split is None:
            self._split = (read_only(np.flatnonzero(self.arr)), read_only(np.flatnonzero(self.arr == 0)))
        return self._split


class SignatureCache:
    """Per (plugin, Filter|Score, pod signature): the plugin's results for every NodeTable
    row and the table version they are current at. Bounded (least recently used go)."""

    MAX_ENTRIES = 64

    def __init__(self) -> None:
        self._entries: OrderedDict[Hashable, CacheEntry] = OrderedDict()
        self._seen: OrderedDict[Hashable, None] = OrderedDict()

    def seen(self, key: Hashable) -> bool:
        """True from the second time a key is asked for: caching pays off only for repeats."""
        if key in self._seen:
            self._seen.move_to_end(key)
            return True
        self._seen[key] = None
        if len(self._seen) > 16 * self.MAX_ENTRIES:
            self._seen.popitem(last=False)
        return False

    def lookup(self, key: Hashable, table: NodeTable) -> CacheEntry | None:
        entry = self._entries.get(key)
        if entry is None or entry.table is not table:
            return None
        self._entries.move_to_end(key)
        return entry

    def store(self, key: Hashable, table: NodeTable, arr: np.ndarray) -> CacheEntry:
        entry = self._entries[key] = CacheEntry(key, table, arr)
        if len(self._entries) > self.MAX_ENTRIES:
            self._entries.popitem(last=False)
        return entry


class FilterOutcome:
    """Result of filtering: feasible rows, and for each rejected row the rejecting plugin.

    ``statuses`` holds the statuses already known (per-node plugins, PreFilter rejections);
    :meth:`Framework.status_of` fills in the others from the plugin's per-node form.
    ``error``: the first Error status a plugin gave; filtering stopped there and the
    cycle fails with it (upstream findNodesThatPassFilters cancels on an Error).
    """

    __slots__ = ("feasible", "_failed_by", "_rejected", "statuses", "error")

    def __init__(self) -> None:
        self.feasible: np.ndarray = np.zeros(0, np.intp)
        self._failed_by: dict[int, str] = {}
        self._rejected: list[tuple[np.ndarray, str]] = []  # batch rejections, not yet in the dict
        self.statuses: dict[int, Status] = {}
        self.error: Status | None = None

    def reject(self, rows: np.ndarray, plugin: str) -> None:
        """Rows ``rows`` were rejected by ``plugin`` (a batch filter; filed when read)."""
        if rows.size:
            self._rejected.append((rows, plugin))

    @property
    def failed_by(self) -> dict[int, str]:
        """For each rejected row, the plugin that rejected it."""
        if self._rejected:
            for rows, plugin in self._rejected:
                self._failed_by.update(dict.fromkeys(rows.tolist(), plugin))
            self._rejected.clear()
        return self._failed_by
