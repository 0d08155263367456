"""Resource pools: which ResourceSlices, and so which devices, a node can use.

Why this exists: upstream's structured allocator starts from ``GatherPools``: the slices
usable on the node (``nodeName`` equal, ``nodeSelector`` matching, or ``allNodes``),
grouped by (driver, pool), only the newest generation of each pool; a pool short of its
``resourceSliceCount`` is incomplete, one with a device name twice is invalid.
:class:`SliceIndex` computes that once per node for one list of slices, so Filter does not
walk every slice of the cluster for every node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kubesched.api.dra import Device, ResourceSlice
from kubesched.api.objects import Node
from kubesched.api.quantity import Quantity

DeviceID = tuple[str, str, str]  # (driver, pool, device)


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid: str = ""
    # DRAPartitionableDevices: the pool's counter sets, and its slices not targeting the node
    # (their allocated devices consume counters too)
    counter_sets: dict[str, dict[str, Quantity]] = field(default_factory=dict)
    other_slices: list[ResourceSlice] = field(default_factory=list)


def slice_on_node(s: ResourceSlice, node: Node) -> bool:
    if s.node_name:
        return s.node_name == node.name
    if s.all_nodes:
        return True
    return s.node_selector is not None and s.node_selector.matches(node.labels, node.name)


def newest_generations(slices: Iterable[ResourceSlice]) -> dict[tuple[str, str], Pool]:
    """Per (driver, pool): a Pool of the slices of its newest generation, in the given order."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        key = (s.driver, s.pool)
        p = pools.get(key)
        if p is None or s.generation > p.generation:
            pools[key] = Pool(s.driver, s.pool, s.generation, [s])
        elif s.generation == p.generation:
            p.slices.append(s)
    return pools


def gather_pools(slices: Sequence[ResourceSlice], node: Node) -> list[Pool]:
    """Upstream ``GatherPools``: the newest generation of each pool usable on ``node``."""
    pools = newest_generations(s for s in slices if slice_on_node(s, node))
    out = []
    for key in sorted(pools):
        p = pools[key]
        p.slices.sort(key=lambda s: s.name)
        p.incomplete = len(p.slices) != p.slices[0].slice_count
        seen: set[str] = set()
        for s in p.slices:
            for d in s.devices:
                if d.name in seen:
                    p.invalid = f"duplicate device name {d.name}"
                seen.add(d.name)
        out.append(p)
    return out


@dataclass(slots=True)
class Candidate:
    pool: Pool
    slice: ResourceSlice
    device: Device
    id: DeviceID = ("", "", "")

    def __post_init__(self) -> None:
        self.id = (self.slice.driver, self.pool.name, self.device.name)


# how a node's pools and candidates are gathered from the slices that may concern it, the
# node, and every slice (DRAPartitionableDevices: :func:`.partitions.partitioned_view`)
Gather = Callable[[Sequence[ResourceSlice], Node, Sequence[ResourceSlice]], tuple[list["Pool"], list["Candidate"]]]


class SliceIndex:
    """The pools and candidate devices of each node, computed once per node for one list of
    ResourceSlices (the plugin keeps an index while the slices do not change).
    ``gather``: another way to gather them (None: upstream's GatherPools without the beta
    features)."""

    def __init__(self, slices: Sequence[ResourceSlice], gather: Gather | None = None) -> None:
        self.slices = slices
        self.gather = gather
        self._local: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        for s in slices:
            if s.node_name:
                self._local.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)
        self._nodes: dict[Any, tuple[list[Pool], list[Candidate]]] = {}
        # (class, selectors) -> node name -> selectable device ids (Allocator.selectable_ids)
        self.selectable: dict[Any, dict[str, list[DeviceID]]] = {}

    @property
    def node_local_only(self) -> bool:
        """Every slice names its node: a node's devices depend on its name alone."""
        return not self._shared

    def node(self, node: Node) -> tuple[list[Pool], list[Candidate]]:
        key: Any = (node.name, frozenset(node.labels.items())) if self._shared else node.name
        got = self._nodes.get(key)
        if got is None:
            local = self._local.get(node.name, [])
            relevant = [*local, *self._shared] if self._shared else local
            if self.gather is not None:
                pools, cands = self.gather(relevant, node, self.slices)
            else:
                pools = gather_pools(relevant, node)
                cands = [Candidate(p, s, d) for p in pools for s in p.slices for d in s.devices]
            got = self._nodes[key] = (pools, cands)
        return got

    @cached_property
    def advanced(self) -> bool:
        """Some slice uses counters, per-device node selection or shareable devices."""
        return any(s.shared_counters or s.per_device_node_selection or
                   any(d.consumes_counters or d.allow_multiple_allocations for d in s.devices)
                   for s in self.slices)
