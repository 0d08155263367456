"""Partitionable devices (DRAPartitionableDevices): pools with counter sets, and devices
that say themselves on which nodes they are usable.

Why this exists: with the gate on, upstream's ``GatherPools`` (``pools_*.go``) and the
allocator's counter accounting (``checkAvailableCounters``) change as follows:

- a slice with ``sharedCounters`` belongs to every node's view of its pool; a slice with
  ``perDeviceNodeSelection`` is relevant when one of its devices is usable on the node, and
  only those devices are candidates;
- a pool whose relevant slices are fewer than ``resourceSliceCount`` is checked against all
  slices of the cluster: a newer generation elsewhere drops the pool, too few slices of its
  generation make it incomplete (no device of it is allocated);
- a pool is invalid when a device name or counter set name repeats, or a device consumes a
  counter set or counter the pool does not define;
- a device that consumes counters fits when, for every counter of its pool, what the pool
  defines minus what allocated devices consume minus what this search already took covers
  it (:class:`CounterLedger`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from kubesched.api.dra import Device, ResourceSlice
from kubesched.api.objects import Node
from kubesched.plugins.dynamicresources.pools import Candidate, DeviceID, Pool, newest_generations

Counters = dict[str, dict[str, Fraction]]  # counter set -> counter -> amount


def device_on_node(d: Device, node: Node) -> bool:
    """Upstream ``NodeMatches`` for a device of a slice with perDeviceNodeSelection."""
    if d.node_name:
        return d.node_name == node.name
    if d.all_nodes:
        return True
    return d.node_selector is not None and d.node_selector.matches(node.labels, node.name)


def _relevant(s: ResourceSlice, node: Node) -> bool:
    if s.shared_counters:
        return True
    if s.node_name:
        return s.node_name == node.name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return s.node_selector.matches(node.labels, node.name)
    return s.per_device_node_selection and any(device_on_node(d, node) for d in s.devices)


def gather_partitioned(slices: Sequence[ResourceSlice], node: Node, everything: Sequence[ResourceSlice]) -> list[Pool]:
    """Upstream ``GatherPools`` with DRAPartitionableDevices: the pools usable on ``node``."""
    pools = newest_generations(s for s in slices if _relevant(s, node))
    out = []
    for key in sorted(pools):
        p = pools[key]
        others: list[ResourceSlice] = []
        if len(p.slices) != p.slices[0].slice_count:
            same = [s for s in everything if (s.driver, s.pool) == key and s.generation >= p.generation]
            if any(s.generation > p.generation for s in same):
                continue  # the driver is replacing this generation
            if len(same) != p.slices[0].slice_count:
                out.append(Pool(p.driver, p.name, p.generation, incomplete=True))
                continue
            mine = {id(s) for s in p.slices}
            others = [s for s in same if id(s) not in mine]
        _build(p, others)
        out.append(p)
    return out


def _build(p: Pool, others: list[ResourceSlice]) -> None:
    """Upstream ``buildPool``: device slices, counter sets, and the checks that make a pool invalid."""
    p.slices.sort(key=lambda s: s.name)
    counter_slices = [s for s in p.slices if s.shared_counters]
    p.slices = [s for s in p.slices if not s.shared_counters]
    seen: set[str] = set()
    for s in p.slices:
        for d in s.devices:
            if d.name in seen:
                p.invalid = f"duplicate device name {d.name}"
                return
            seen.add(d.name)
    for s in counter_slices:
        for cs in s.shared_counters:
            if cs.name in p.counter_sets:
                p.invalid = f"duplicate counter set name {cs.name}"
                return
            p.counter_sets[cs.name] = dict(cs.counters)
    for s in [*p.slices, *others]:
        for d in s.devices:
            for use in d.consumes_counters:
                have = p.counter_sets.get(use.counter_set)
                if have is None:
                    p.invalid = f"counter set {use.counter_set} not found"
                    return
                for name in use.counters:
                    if name not in have:
                        p.invalid = f"counter {name} not found in counter set {use.counter_set}"
                        return
    p.other_slices = [s for s in others if not s.shared_counters]


def partitioned_view(slices: Sequence[ResourceSlice], node: Node,
                     everything: Sequence[ResourceSlice]) -> tuple[list[Pool], list[Candidate]]:
    """The pools and candidates on ``node`` with DRAPartitionableDevices (a ``Gather`` of
    :class:`.pools.SliceIndex`)."""
    pools = gather_partitioned(slices, node, everything)
    return pools, node_devices(pools, node)


def node_devices(pools: list[Pool], node: Node) -> list[Candidate]:
    """The candidates on ``node``, in pool / slice / device order (per-device node selection applied)."""
    return [Candidate(p, s, d) for p in pools for s in p.slices for d in s.devices
            if not s.per_device_node_selection or device_on_node(d, node)]


class CounterLedger:
    """Counters available per pool (computed once per allocator: allocated devices do not
    change while it lives) and what the running search has taken."""

    def __init__(self, allocated: Callable[[DeviceID], bool]) -> None:
        self.allocated = allocated
        self._available: dict[tuple[str, str], Counters] = {}

    def available(self, p: Pool) -> Counters:
        key = (p.driver, p.name)
        got = self._available.get(key)
        if got is None:
            got = {name: {c: q.amount for c, q in cs.items()} for name, cs in p.counter_sets.items()}
            for s in [*p.slices, *p.other_slices]:
                for d in s.devices:
                    if not self.allocated((s.driver, p.name, d.name)):
                        continue
                    for use in d.consumes_counters:
                        left = got.get(use.counter_set, {})
                        for c, q in use.counters.items():
                            if c in left:
                                left[c] -= q.amount  # may go negative: nothing left
            self._available[key] = got
        return got


class CounterSearch:
    """The counters one allocation search takes (upstream ``consumedCounters``)."""

    def __init__(self, ledger: CounterLedger) -> None:
        self.ledger = ledger
        self.taken: dict[tuple[str, str], Counters] = {}

    def take(self, c: Candidate) -> bool:
        """Take the device's counters; False (and nothing taken) when a counter of its pool
        would be exceeded."""
        avail = self.ledger.available(c.pool)
        taken = self.taken.setdefault((c.pool.driver, c.pool.name), {})
        for use in c.device.consumes_counters:
            mine = taken.setdefault(use.counter_set, {})
            for name, q in use.counters.items():
                mine[name] = mine.get(name, Fraction(0)) + q.amount
        for set_name, counters in avail.items():
            mine = taken.get(set_name, {})
            for name, amount in counters.items():
                if amount < mine.get(name, Fraction(0)):
                    self.give_back(c)
                    return False
        return True

    def give_back(self, c: Candidate) -> None:
        taken = self.taken[(c.pool.driver, c.pool.name)]
        for use in c.device.consumes_counters:
            for name, q in use.counters.items():
                taken[use.counter_set][name] -= q.amount


def _placement(c: Candidate) -> tuple[str, dict[str, Any] | None]:
    """Node name and raw node selector that restrict where the device is usable."""
    if not c.slice.per_device_node_selection:
        spec = c.slice.raw.get("spec", {})
        return c.slice.node_name, spec.get("nodeSelector")
    raw: dict[str, Any] = next((d for d in c.slice.raw.get("spec", {}).get("devices") or []
                                if d.get("name") == c.device.name), {})
    return c.device.node_name, raw.get("nodeSelector")


def merged_node_selector(devices: list[Candidate], node: Node) -> dict[str, Any] | None:
    """Upstream ``createNodeSelector``: the node itself when a device is node-local, else one
    term with the requirements of every device's (single-term) selector, without repeats."""
    fields: list[Any] = []
    exprs: list[Any] = []
    for c in devices:
        name, sel = _placement(c)
        if name:
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node.name]}]}]}
        terms = (sel or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            for src, dst in ((terms[0].get("matchFields") or [], fields),
                             (terms[0].get("matchExpressions") or [], exprs)):
                for req in src:
                    if not any(_same(req, have) for have in dst):
                        dst.append(req)
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]} if term else None


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a.get("key") == b.get("key") and a.get("operator") == b.get("operator")
            and set(a.get("values") or []) == set(b.get("values") or []))
