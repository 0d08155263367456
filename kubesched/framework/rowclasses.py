"""Rows with the same resource state, computed once: NodeResourcesFit and the resource
scorers over distinct node states instead of every row.

The resource plugins' batch forms read only a row's resource columns (allocatable and
requested per resource, the non-zero requests, the pod count), so two rows with the same
values give the same result for any pod. On a large cluster most rows share a few states
(every empty node of one machine type is the same), and when every pod asks for something
different no per-pod-signature cache helps: each cycle runs the plugin over every row. Here
:class:`RowClasses` keeps, for a NodeTable, the id of each row's resource state (a
*class*), kept current from the table's change log (binding a pod changes one row), and
:meth:`RowClasses.map` runs a plugin's batch function once over the classes' values (a
:class:`ClassColumns`, shaped like the table's resource columns, a row per class) and
gathers the results back to the rows. The result is the function's own, value for value.

The class path is taken only where it pays: over at least :data:`MIN_ROWS` rows and when
the class ids are at most half the rows asked for; else the function runs on the
table's rows as before. A class no row holds any more frees its id, which the next new
state reuses (its values overwritten); when the free ids outnumber the live ones (plus
:data:`SLACK`), the ids are rebuilt from scratch. The function also runs over the free
ids' stale values: harmless, nothing gathers them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo

#: Fewer rows than this: run the function on the rows (there, a NumPy operation costs
#: mostly its fixed overhead, and the class bookkeeping would cost more than it saves).
MIN_ROWS = 8192
#: Free class ids tolerated beyond the live ones before the ids are rebuilt.
SLACK = 1024

State = tuple[int, int, int, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]
I64 = np.int64


def state_of(ni: NodeInfo) -> State:
    """What the resource columns of ``ni``'s row hold (absent resources read as 0 there)."""
    return (ni.non0_cpu, ni.non0_mem, len(ni.pods), tuple(sorted(ni.allocatable.items())),
            tuple(sorted(ni.requested.items())))


class ClassColumns(NodeTable):
    """A NodeTable's resource columns with a row per class: ``alloc``, ``req`` (the same
    resource names as the table's), ``non0_cpu``, ``non0_mem``, ``pod_count``. Only those
    are valid (no labels, taints, images or NodeInfos)."""

    def __init__(self, size: int, non0_cpu: np.ndarray, non0_mem: np.ndarray, pod_count: np.ndarray,
                 alloc: dict[str, np.ndarray], req: dict[str, np.ndarray]) -> None:
        # deliberately not NodeTable.__init__: no NodeInfos behind these rows
        self.size = size
        self.non0_cpu, self.non0_mem, self.pod_count = non0_cpu, non0_mem, pod_count
        self.alloc, self.req = alloc, req


class _Values:
    """The classes' values as growable int64 arrays (capacity doubles)."""

    def __init__(self) -> None:
        self.n = 0
        self.cap = 64
        self.fixed = [np.zeros(self.cap, I64) for _ in range(3)]  # non0_cpu, non0_mem, pod_count
        self.alloc: dict[str, np.ndarray] = {}
        self.req: dict[str, np.ndarray] = {}

    def _grow(self) -> None:
        self.cap *= 2
        def bigger(a: np.ndarray) -> np.ndarray:
            b = np.zeros(self.cap, I64)
            b[:a.size] = a
            return b
        self.fixed = [bigger(a) for a in self.fixed]
        self.alloc = {k: bigger(a) for k, a in self.alloc.items()}
        self.req = {k: bigger(a) for k, a in self.req.items()}

    def append(self, st: State) -> None:
        if self.n == self.cap:
            self._grow()
        self.n += 1
        self.set(self.n - 1, st)

    def set(self, i: int, st: State) -> None:
        """Class ``i`` now holds ``st`` (every column written: absent resources are 0)."""
        for a, v in zip(self.fixed, st[:3]):
            a[i] = v
        for store, items in ((self.alloc, st[3]), (self.req, st[4])):
            values = dict(items)
            for name in values.keys() - store.keys():
                store[name] = np.zeros(self.cap, I64)  # the other classes: 0
            for name, col in store.items():
                col[i] = values.get(name, 0)

    def view(self, alloc_names: list[str], req_names: list[str]) -> ClassColumns:
        n = self.n
        def cols(store: dict[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            for name in names:
                col = store.get(name)
                if col is None:
                    col = store[name] = np.zeros(self.cap, I64)  # no class has it: 0
                out[name] = col[:n]
            return out
        c, m, p = (a[:n] for a in self.fixed)
        return ClassColumns(n, c, m, p, cols(self.alloc, alloc_names), cols(self.req, req_names))


class RowClasses:
    """Per row of the last table seen the id of its resource state; see the module doc."""

    def __init__(self) -> None:
        self._table: weakref.ref[NodeTable] | None = None
        self._version = -1
        self.ids = np.zeros(0, np.int32)
        self._index: dict[State, int] = {}
        self._values = _Values()
        self._members: list[int] = []
        self._states: list[State] = []
        self._free: list[int] = []  # ids of classes no row holds: reused first
        self.live = 0
        self._gathered: tuple[np.ndarray, int, np.ndarray] | None = None  # (idx, version, ids[idx])

    @property
    def count(self) -> int:
        """Class ids allocated (those of live classes, and free ones)."""
        return len(self._members)

    def _id(self, st: State) -> int:
        c = self._index.get(st)
        if c is None:
            if self._free:
                c = self._free.pop()
                self._values.set(c, st)
                self._states[c] = st
            else:
                c = len(self._members)
                self._values.append(st)
                self._members.append(0)
                self._states.append(st)
            self._index[st] = c
        return c

    def _join(self, c: int, sign: int) -> None:
        m = self._members[c] + sign
        self._members[c] = m
        if sign > 0 and m == 1:
            self.live += 1
        elif sign < 0 and m == 0:
            self.live -= 1
            del self._index[self._states[c]]
            self._free.append(c)

    def _rebuild(self, table: NodeTable) -> None:
        self._index, self._values, self._members, self.live = {}, _Values(), [], 0
        self._states, self._free = [], []
        self._gathered = None
        ids = np.fromiter((self._id(state_of(ni)) for ni in table.infos), np.int32, table.size)
        for c in ids.tolist():
            self._join(c, 1)
        self.ids = ids
        self._table = weakref.ref(table)

    def sync(self, table: NodeTable) -> None:
        """Bring the ids up to date with ``table``'s rows."""
        changed = None
        if self._table is not None and self._table() is table:
            changed = table.changed_since(self._version)
        if changed is None:
            self._rebuild(table)
        else:
            ids, infos = self.ids, table.infos
            for i in changed.tolist():
                c = self._id(state_of(infos[i]))
                old = int(ids[i])
                if c != old:
                    self._join(old, -1)
                    self._join(c, 1)
                    ids[i] = c
            if self.count > 2 * self.live + SLACK:
                self._rebuild(table)
        self._version = table.version

    def columns(self, table: NodeTable) -> ClassColumns:
        """Every class's values as resource columns (the table's resource names)."""
        return self._values.view(list(table.alloc), list(table.req))

    def map(self, table: NodeTable, idx: np.ndarray,
            fn: Callable[[NodeTable, np.ndarray], np.ndarray]) -> np.ndarray:
        """``fn(table, idx)``, computed per class when that pays (see the module doc)."""
        if idx.size < MIN_ROWS:
            return fn(table, idx)
        self.sync(table)
        if 2 * self.count > idx.size:
            return fn(table, idx)
        cols = self.columns(table)
        per_class = fn(cols, np.arange(cols.size, dtype=np.intp))
        out: np.ndarray = per_class[self._ids_of(table, idx)]
        return out

    def _ids_of(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        """``ids[idx]``; the last one is kept (the score plugins of a cycle share ``idx``)."""
        if idx is table.all:
            return self.ids
        g = self._gathered
        if g is not None and g[0] is idx and g[1] == table.version:
            return g[2]
        ids: np.ndarray = self.ids[idx]
        self._gathered = (idx, table.version, ids)
        return ids


_SHARED: weakref.WeakKeyDictionary[NodeTable, RowClasses] = weakref.WeakKeyDictionary()


def classes_of(table: NodeTable) -> RowClasses:
    """The :class:`RowClasses` of ``table``, shared by every plugin that asks (one set of
    ids per table, freed with it)."""
    rc = _SHARED.get(table)
    if rc is None:
        rc = _SHARED[table] = RowClasses()
    return rc


def map_classes(table: NodeTable, idx: np.ndarray,
                fn: Callable[[NodeTable, np.ndarray], np.ndarray]) -> np.ndarray:
    """``fn(table, idx)`` through ``table``'s shared :class:`RowClasses` (see the module doc)."""
    if idx.size < MIN_ROWS:
        return fn(table, idx)
    return classes_of(table).map(table, idx, fn)
