"""Per-node columns for NodeVolumeLimits' batch form: each CSI driver's limit (from the
node's CSINode) and how many distinct volumes of that driver the node's pods already use.

Why this exists: upstream counts a node's attached volumes pod by pod, per node, per
pod. Kept as NumPy columns over the NodeTable, refreshed only for rows the table rewrote
(and fully when storage objects changed), a pod's check over thousands of nodes is a few
array comparisons; rows where the pod's own volume is already attached (counted once) or
whose pods cannot be resolved fall back to the exact per-node check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.api.storage import CSINode
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo

Attached = Callable[[NodeInfo, "CSINode | None"], dict[str, str]]
Limits = Callable[["CSINode | None"], dict[str, int]]


class VolumeColumns:
    def __init__(self) -> None:
        self.table: NodeTable | None = None
        self.table_version = -1
        self.storage_version: Any = None
        self.limit: dict[str, np.ndarray] = {}  # driver -> limit per row (-1: none)
        self.count: dict[str, np.ndarray] = {}  # driver -> attached volumes per row
        self.uniques: list[dict[str, str]] = []  # row -> attached unique name -> driver
        self.broken: set[int] = set()  # rows whose pods' volumes could not be resolved
        self.where: dict[str, set[int]] = {}  # attached unique name -> rows
        self.limited = np.zeros(0, dtype=bool)  # rows whose CSINode sets any limit

    def refresh(self, table: NodeTable, storage_version: Any, csi_node: Callable[[str], CSINode | None],
                attached: Attached, limits: Limits) -> None:
        if table is self.table and storage_version == self.storage_version:
            rows = table.changed_since(self.table_version)
            if rows is not None:
                for i in rows.tolist():
                    self._row(table, i, csi_node, attached, limits)
                self.table_version = table.version
                return
        self.table, self.storage_version, self.table_version = table, storage_version, table.version
        self.limit, self.count, self.uniques, self.broken = {}, {}, [{} for _ in range(table.size)], set()
        self.where = {}
        self.limited = np.zeros(table.size, dtype=bool)
        for i in range(table.size):
            self._row(table, i, csi_node, attached, limits)

    def _col(self, store: dict[str, np.ndarray], driver: str, fill: int) -> np.ndarray:
        col = store.get(driver)
        if col is None:
            assert self.table is not None
            col = store[driver] = np.full(self.table.size, fill, np.int64)
        return col

    def _row(self, table: NodeTable, i: int, csi_node: Callable[[str], CSINode | None],
             attached: Attached, limits: Limits) -> None:
        ni = table.infos[i]
        cn = csi_node(ni.name)
        lim = limits(cn)
        self.limited[i] = bool(lim)
        for d, col in self.limit.items():
            col[i] = lim.get(d, -1)
        for d, v in lim.items():
            self._col(self.limit, d, -1)[i] = v
        self.broken.discard(i)
        try:
            att = attached(ni, cn)
        except Exception:  # noqa: BLE001 - an unresolvable pod: the exact check reports it
            self.broken.add(i)
            att = {}
        for u in self.uniques[i]:
            rows = self.where.get(u)
            if rows is not None:
                rows.discard(i)
                if not rows:
                    del self.where[u]
        self.uniques[i] = att
        for u in att:
            self.where.setdefault(u, set()).add(i)
        per: dict[str, int] = {}
        for d in att.values():
            per[d] = per.get(d, 0) + 1
        for d, col in self.count.items():
            col[i] = per.get(d, 0)
        for d, n in per.items():
            self._col(self.count, d, 0)[i] = n

    def fits(self, idx: np.ndarray, new: dict[str, str]) -> tuple[np.ndarray, list[int]]:
        """Rows of ``idx`` where the new volumes fit every limited driver, and the positions
        (into ``idx``) that need the exact per-node check."""
        ok = np.ones(idx.size, dtype=bool)
        per: dict[str, int] = {}
        for d in new.values():
            per[d] = per.get(d, 0) + 1
        for d, n in per.items():
            lim = self.limit.get(d)
            if lim is None:
                continue
            cnt = self.count.get(d)
            att = cnt[idx] if cnt is not None else 0
            li = lim[idx]
            ok &= (li < 0) | (att + n <= li)
        special = set(self.broken)
        for u in new:
            special |= self.where.get(u, set())
        if not special:
            return ok, []
        pos = {i: j for j, i in enumerate(idx.tolist())} if len(special) * 8 > idx.size else None
        exact = []
        for i in sorted(special):
            if pos is not None:
                j = pos.get(i)
            else:
                hit = np.nonzero(idx == i)[0]
                j = int(hit[0]) if hit.size else None
            if j is not None:
                exact.append(j)
        return ok, exact
