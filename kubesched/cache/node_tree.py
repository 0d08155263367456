"""Upstream's node tree: nodes grouped by zone, listed round-robin across zones.

The order matters: it is the order Filter visits nodes in (with the rotating start index
when ``percentageOfNodesToScore`` < 100) and the order ties are met in.
"""

from __future__ import annotations

from kubesched.api.objects import Node

ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION_BETA = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def zone_key(node: Node) -> str:
    """``utilnode.GetZoneKey``."""
    labels = node.labels
    zone = labels[ZONE_BETA] if ZONE_BETA in labels else labels.get(ZONE, "")
    region = labels[REGION_BETA] if REGION_BETA in labels else labels.get(REGION, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Per zone, the node names in insertion order (a dict used as an ordered set, so that
    adding and removing a node is O(1) at 100,000+ nodes)."""

    def __init__(self) -> None:
        self.tree: dict[str, dict[str, None]] = {}
        self.zones: list[str] = []
        self.num_nodes = 0

    def add(self, node: Node) -> None:
        z = zone_key(node)
        names = self.tree.get(z)
        if names is None:
            self.zones.append(z)
            self.tree[z] = {node.name: None}
        elif node.name in names:
            return
        else:
            names[node.name] = None
        self.num_nodes += 1

    def remove(self, node: Node) -> None:
        z = zone_key(node)
        names = self.tree.get(z)
        if names and node.name in names:
            del names[node.name]
            self.num_nodes -= 1
            if not names:
                del self.tree[z]
                self.zones.remove(z)

    def update(self, old: Node | None, new: Node) -> None:
        if old is not None and zone_key(old) == zone_key(new):
            return
        if old is not None:
            self.remove(old)
        self.add(new)

    def list(self) -> list[str]:
        out: list[str] = []
        zones = [list(self.tree[z]) for z in self.zones]
        i = 0
        while len(out) < self.num_nodes:
            for names in zones:
                if i < len(names):
                    out.append(names[i])
            i += 1
        return out
