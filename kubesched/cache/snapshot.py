"""``Snapshot``: the immutable view of the cluster that one scheduling cycle reads.

Updated from the cache by generation: only nodes whose NodeInfo changed since the last
update are cloned in, and only their rows of the ``NodeTable`` are rewritten. Adding or
removing a node rebuilds the (zone-interleaved) list.
"""

from __future__ import annotations

import bisect

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo


class Snapshot:
    def __init__(self) -> None:
        self.node_infos: list[NodeInfo] = []
        self.node_map: dict[str, NodeInfo] = {}
        self.position: dict[str, int] = {}
        self.have_pods_with_affinity: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity: list[NodeInfo] = []
        self.generation = 0
        self._table: NodeTable | None = None

    def get(self, name: str) -> NodeInfo | None:
        return self.node_map.get(name)

    def num_nodes(self) -> int:
        return len(self.node_infos)

    @property
    def table(self) -> NodeTable:
        if self._table is None:
            self._table = NodeTable(self.node_infos)
        return self._table

    def _set_lists(self, order: list[str]) -> None:
        self.node_infos = [self.node_map[n] for n in order if n in self.node_map]
        self.position = {ni.name: i for i, ni in enumerate(self.node_infos)}
        self._table = None
        self._refresh_affinity_lists()

    def _update_affinity_lists(self, names: list[str]) -> None:
        """Nodes ``names`` gained or lost pods with (anti-)affinity: add or drop them in the
        two lists, keeping the lists in node order, without walking every node."""
        for name in names:
            ni = self.node_map.get(name)
            pos = self.position.get(name)
            if ni is None or pos is None:
                self._refresh_affinity_lists()
                return
            for lst, member in ((self.have_pods_with_affinity, bool(ni.pods_with_affinity)),
                                (self.have_pods_with_required_anti_affinity,
                                 bool(ni.pods_with_required_anti_affinity))):
                i = bisect.bisect_left(lst, pos, key=lambda x: self.position[x.name])
                present = i < len(lst) and lst[i] is ni
                if member and not present:
                    lst.insert(i, ni)
                elif present and not member:
                    del lst[i]

    def _refresh_affinity_lists(self) -> None:
        self.have_pods_with_affinity = [ni for ni in self.node_infos if ni.pods_with_affinity]
        self.have_pods_with_required_anti_affinity = [
            ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]

    def _replace(self, ni: NodeInfo) -> bool:
        """Copy a fresh clone of a changed node into the existing NodeInfo (in place, so
        every list that holds it stays valid, as upstream does); False when the node is new."""
        name = ni.name
        old = self.node_map.get(name)
        pos = self.position.get(name)
        if old is None or pos is None:
            self.node_map[name] = ni
            return False
        for slot in NodeInfo.__slots__:
            setattr(old, slot, getattr(ni, slot))
        if self._table is not None:
            self._table.update_row(pos, old)
        return True
