"""Per-node contributions summed over the cluster, kept up to date incrementally.

InterPodAffinity's PreFilter and PreScore fold every existing pod of every node into
per-topology-domain counts. Most of that work does not depend on the incoming pod: which
pods a given label selector matches (per namespace), or which terms the existing pods
carry. :class:`NodeAggregate` keeps, per node, the contribution of its pods (a small
``{key: count}`` dict computed by a caller-supplied function) together with the node's
generation, and the sum of all contributions. Contribution keys are ``(group, key)``
pairs and the sum is kept as ``{group: {key: count}}`` (zero counts dropped). Each cycle it recomputes only the nodes
whose NodeInfo generation moved (the NodeTable change log when the same table is seen
again, else a generation comparison over all nodes), so the result is exactly the sum a
full recount would give.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from kubesched.framework.types import NodeInfo

log = logging.getLogger(__name__)

Contribution = dict[tuple[Any, Any], int]
Total = dict[Any, dict[Any, int]]


class NodeAggregate:
    __slots__ = ("_contrib", "_entries", "total", "_table", "_version")

    def __init__(self, contrib: Callable[[NodeInfo], Contribution]) -> None:
        self._contrib = contrib
        self._entries: dict[str, tuple[int, Contribution]] = {}
        self.total: Total = {}
        self._table: Any = None
        self._version = -1

    def _apply(self, c: Contribution, sign: int) -> None:
        total = self.total
        for (g, k), v in c.items():
            sub = total.get(g)
            if sub is None:
                sub = total[g] = {}
            n = sub.get(k, 0) + sign * v
            if n == 0:
                del sub[k]
                if not sub:
                    del total[g]
            else:
                sub[k] = n

    def _refresh(self, ni: NodeInfo) -> None:
        node = ni.node
        if node is None:
            return
        name = node.name
        old = self._entries.get(name)
        if old is not None:
            if old[0] == ni.generation:
                return
            self._apply(old[1], -1)
        c = self._contrib(ni)
        self._entries[name] = (ni.generation, c)
        self._apply(c, 1)

    def sync(self, nodes: Sequence[NodeInfo], table: Any = None) -> Total:
        """Bring the sum up to date with ``nodes`` and return it (do not mutate it)."""
        if table is not None and table is self._table and getattr(table, "size", -1) == len(nodes):
            changed = table.changed_since(self._version)
            if changed is not None:
                infos = table.infos
                for i in changed.tolist():
                    self._refresh(infos[i])
                self._version = table.version
                return self.total
        seen: set[str] = set()
        for ni in nodes:
            node = ni.node
            if node is None:
                continue
            seen.add(node.name)
            self._refresh(ni)
        if len(seen) != len(self._entries):
            for name in [n for n in self._entries if n not in seen]:
                self._apply(self._entries.pop(name)[1], -1)
        if table is not None and getattr(table, "size", -1) == len(nodes):
            self._table = table
            self._version = table.version
        else:
            self._table = None
        return self.total


class AggregateCache:
    """A few :class:`NodeAggregate` by signature, the least recently used evicted."""

    def __init__(self, limit: int = 32) -> None:
        self._limit = limit
        self._items: dict[Hashable, NodeAggregate] = {}

    def get(self, sig: Hashable, contrib: Callable[[NodeInfo], Contribution]) -> NodeAggregate:
        agg = self._items.pop(sig, None)
        if agg is None:
            agg = NodeAggregate(contrib)
            if len(self._items) >= self._limit:
                self._items.pop(next(iter(self._items)))
        self._items[sig] = agg
        return agg
