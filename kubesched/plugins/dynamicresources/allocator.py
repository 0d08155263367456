"""The structured allocator: which devices on one node satisfy all claims of a pod.

Why this exists: upstream's DynamicResources Filter asks
``k8s.io/dynamic-resource-allocation/structured``'s allocator, per node, for an allocation
of every claim the pod still needs. This is the same search, written for our objects:

- pools: the ResourceSlices usable on the node (``nodeName`` equal, ``nodeSelector``
  matching, or ``allNodes``), grouped by (driver, pool); only slices of a pool's newest
  generation count; a pool whose slice count is short of ``resourceSliceCount`` is
  incomplete, one with a device name twice is invalid;
- claims in the pod's order, requests in the claim's order, devices in pool / slice /
  device order; a ``firstAvailable`` request tries its subrequests in order; a device is a
  candidate when it is not in use (allocated to any claim, or in flight, or already picked
  in this search), every selector of its class and of the request is true, and every
  ``matchAttribute`` constraint of the claim naming the request still holds;
- depth-first search with backtracking: the first complete assignment wins;
- ``allocationMode: All`` takes every matching device of the node's pools (an error when a
  pool is incomplete or invalid, as upstream: the pod cannot be scheduled on guesswork).

With DRAPartitionableDevices or DRAConsumableCapacity on (:class:`.sharing.Sharing`), pools
are gathered as :mod:`.partitions` says, and each device taken also passes
:class:`.sharing.SharingSearch` (counters, capacity); with both off the search is exactly
the one above.

Errors that upstream returns from ``Allocate`` (a selector that does not compile or fails
to evaluate, an incomplete pool for ``All``) are raised as :class:`AllocationError`; the
plugin turns them into an Error status. ``explain_failure`` gives, for a node where no
allocation exists, the first request that cannot be met and why (beyond upstream).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.dra import ALL, Device, DeviceClass, ExactRequest, ResourceClaim, ResourceSlice
from kubesched.api.objects import Node
from kubesched.plugins.dynamicresources.cel import CelError, compile_selector
from kubesched.plugins.dynamicresources.devicefeatures import OFF, DeviceFeatures, excluded, tainted
from kubesched.plugins.dynamicresources.capacity import CapacityError
from kubesched.plugins.dynamicresources.partitions import CounterLedger, merged_node_selector, partitioned_view
from kubesched.plugins.dynamicresources.pools import Candidate, DeviceID, Gather, Pool, SliceIndex
from kubesched.plugins.dynamicresources.sharing import AllocatedState, Sharing, SharingSearch, share_fields


class AllocationError(Exception):
    """Upstream ``Allocate`` returned an error: scheduling of the pod is aborted."""


def selectors_match(who: str, exprs: Sequence[str], c: Candidate) -> bool:
    """All of ``exprs`` true for the device; upstream's error wording on failure."""
    for i, expr in enumerate(exprs):
        try:
            sel = compile_selector(expr)
        except CelError as exc:
            raise AllocationError(f"{who}: selector #{i}: CEL compile error: {exc}") from None
        try:
            if not sel.matches(c.slice.driver, c.device):
                return False
        except CelError as exc:
            raise AllocationError(f"{who}: selector #{i}: CEL runtime error: {exc}") from None
    return True


class _Constraint:
    """A ``matchAttribute`` constraint while the search runs (upstream ``matchAttributeConstraint``)."""

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.values: list[Any] = []

    def applies(self, request: str) -> bool:
        if not self.requests:
            return True
        parent = request.partition("/")[0]
        return request in self.requests or parent in self.requests

    def add(self, request: str, device: Device) -> bool:
        if not self.applies(request):
            return True
        v = device.attributes.get(self.attribute)
        if v is None:
            return False
        if self.values and self.values[0] != v:
            return False
        self.values.append(v)
        return True

    def remove(self, request: str) -> None:
        if self.applies(request):
            self.values.pop()


_SELECTABLE: dict[tuple[DeviceClass, tuple[str, ...], Device], bool] = {}
_MAX_SELECTABLE = 1_000_000


def index_gather(sharing: Sharing) -> Gather | None:
    """How a :class:`SliceIndex` gathers pools for these features."""
    return partitioned_view if sharing.partitionable else None


class Allocator:
    """One pod's claims to allocate; ``allocate(node)`` runs the search for one node."""

    def __init__(self, claims: Sequence[ResourceClaim], in_use: set[DeviceID],
                 classes: Callable[[str], DeviceClass | None],
                 slices: Sequence[ResourceSlice] | SliceIndex, features: DeviceFeatures = OFF,
                 sharing: Sharing = Sharing(), state: AllocatedState | None = None) -> None:
        self.claims = list(claims)
        self.features = features  # device taints and binding conditions (devicefeatures)
        self._extended = features.extended
        self.in_use = in_use
        self.classes = classes
        self.sharing = sharing
        self.index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices, index_gather(sharing))
        # DRAPartitionableDevices / DRAConsumableCapacity: ``in_use`` holds the exclusively
        # allocated devices, ``state`` the shared ones too (:mod:`.sharing`)
        self.state = state if state is not None else AllocatedState(in_use)
        self.ledger = CounterLedger(self.state.allocated)
        # the common shape, one claim with one ExactCount request and no constraints: the
        # search reduces to "the first `count` free, selectable devices in order"
        self._simple: ExactRequest | None = None
        if len(self.claims) == 1 and not self.claims[0].spec.constraints and \
                len(self.claims[0].spec.requests) == 1:
            only = self.claims[0].spec.requests[0].exactly
            if only is not None and only.allocation_mode != ALL and not only.admin_access:
                self._simple = only
        if sharing.any and self._simple is not None and (self.index.advanced or self._simple.capacity):
            self._simple = None  # devices or requests the shortcut does not know about

    # -- selection -----------------------------------------------------------------------
    def selectable(self, claim: ResourceClaim, req: ExactRequest, c: Candidate) -> bool:
        """The class's selectors, then the request's, all true (upstream ``isSelectable``);
        the result depends only on them and the device, so it is shared by every pod."""
        if self._extended and excluded(self.features, c.device):
            return False
        cls = self.classes(req.device_class_name)
        if cls is None:  # checked in PreFilter; a class deleted since then
            raise AllocationError(f"request {req.name}: could not retrieve device class "
                                  f"{req.device_class_name}")
        key = (cls, req.selectors, c.device)
        hit = _SELECTABLE.get(key)
        if hit is None:
            hit = selectors_match(f"class {cls.name}", cls.selectors, c) and \
                selectors_match(f"claim {claim.key}", req.selectors, c)
            if len(_SELECTABLE) > _MAX_SELECTABLE:
                _SELECTABLE.clear()
            _SELECTABLE[key] = hit
        return hit

    def allocate(self, node: Node) -> list[list[tuple[str, Candidate]]] | None:
        """Per claim, the (request name, device) picked; None when no allocation exists."""
        pools, cands = self.index.node(node)
        bad = [f"{p.driver}/{p.name}: {p.invalid}" for p in pools if p.invalid]
        if bad:
            raise AllocationError(f"invalid resource pools were encountered: {', '.join(bad)}")
        if self._simple is not None:
            return self._first_free(self._simple, cands)
        if self.sharing.any and not self.sharing.consumable:
            self._refuse_capacity_requests()
        search = _Search(self, node, pools, cands)
        try:
            return search.run()
        except CapacityError as exc:
            raise AllocationError(str(exc)) from None

    def _refuse_capacity_requests(self) -> None:
        """Upstream's allocator (with any beta feature on) refuses capacity requests while
        DRAConsumableCapacity is off, rather than ignoring them."""
        for claim in self.claims:
            for r in claim.spec.requests:
                if r.exactly is not None and r.exactly.capacity is not None:
                    raise AllocationError(f"claim {claim.key}, request {r.name}: has capacity requests, but the "
                                          "DRAConsumableCapacity feature is disabled")
                for sub in r.first_available:
                    if sub.capacity is not None:
                        raise AllocationError(f"claim {claim.key}, subrequest {sub.name.partition('/')[2]}: has "
                                              "capacity requests, but the DRAConsumableCapacity feature is disabled")

    def simple_request(self) -> ExactRequest | None:
        """The single ExactCount request when the claims have the simple shape, else None."""
        return self._simple

    def selectable_ids(self) -> tuple[dict[str, list[DeviceID]], Callable[[Node], list[DeviceID]]]:
        """Simple shape only: node name -> the node's devices selectable for the request, in
        order (a memo shared by every pod with the same class and selectors), and the
        function that fills it for a node (every device evaluated; raises AllocationError
        as the search would on a failing selector)."""
        req = self._simple
        assert req is not None
        cls = self.classes(req.device_class_name)
        taints = self.features.taints
        memo = self.index.selectable.setdefault((cls, req.selectors, req.tolerations) if taints else
                                                (cls, req.selectors), {})
        claim = self.claims[0]

        def fill(node: Node) -> list[DeviceID]:
            _, cands = self.index.node(node)
            ids = memo[node.name] = [c.id for c in cands if self.selectable(claim, req, c)
                                     and not (taints and tainted(self.features, req, c.device))]
            return ids

        return memo, fill

    def _first_free(self, req: ExactRequest, cands: list[Candidate]) -> list[list[tuple[str, Candidate]]] | None:
        """What the search finds for the simple shape, in the same order of checks."""
        claim, in_use, picks = self.claims[0], self.in_use, []
        for c in cands:
            if c.id in in_use or not self.selectable(claim, req, c):
                continue
            if self._extended and tainted(self.features, req, c.device):
                continue
            picks.append((req.name, c))
            if len(picks) == req.count:
                return [picks]
        return None


class _Search:
    def __init__(self, alloc: Allocator, node: Node, pools: list[Pool], cands: list[Candidate]) -> None:
        self.a = alloc
        self.pools = pools
        self.cands = cands
        self.picked: set[DeviceID] = set()
        self.result: list[list[tuple[str, Candidate]]] = [[] for _ in alloc.claims]
        self.constraints = [[_Constraint(c.requests, c.match_attribute) for c in cl.spec.constraints]
                            for cl in alloc.claims]
        self._all: dict[tuple[int, str], list[Candidate]] = {}
        self.ext = SharingSearch(alloc.sharing, alloc.state, alloc.ledger) if alloc.sharing.any else None

    def run(self) -> list[list[tuple[str, Candidate]]] | None:
        return self.result if self.claim(0) else None

    def claim(self, ci: int) -> bool:
        if ci >= len(self.a.claims):
            return True
        return self.request(ci, 0)

    def request(self, ci: int, ri: int) -> bool:
        reqs = self.a.claims[ci].spec.requests
        if ri >= len(reqs):
            return self.claim(ci + 1)
        r = reqs[ri]
        if r.exactly is not None:
            return self.devices(ci, ri, r.exactly, 0)
        return any(self.devices(ci, ri, sub, 0) for sub in r.first_available)

    def all_devices(self, ci: int, req: ExactRequest) -> list[Candidate]:
        key = (ci, req.name)
        got = self._all.get(key)
        if got is None:
            claim = self.a.claims[ci]
            for p in self.pools:
                if p.incomplete:
                    raise AllocationError(f"claim {claim.key}, request {req.name}: asks for all devices, but "
                                          f"resource pool {p.driver}/{p.name} is currently being updated")
            got = self._all[key] = [c for c in self.cands if self.a.selectable(claim, req, c) and
                                    (self.ext is None or not self.a.sharing.consumable or
                                     self.ext.capacity_fits(req, c, alone=True) is not None)]
        return got

    def devices(self, ci: int, ri: int, req: ExactRequest, k: int) -> bool:
        """Pick device number ``k`` (and the rest) of ``req``, backtracking on failure."""
        claim = self.a.claims[ci]
        if req.allocation_mode == ALL:
            every = self.all_devices(ci, req)
            if k >= len(every):
                return bool(every) and self.request(ci, ri + 1)
            return self.take(ci, ri, req, k, every[k])
        if k >= req.count:
            return self.request(ci, ri + 1)
        for c in self.cands:
            if not req.admin_access and (c.id in self.a.in_use or c.id in self.picked):
                continue
            if not self.a.selectable(claim, req, c):
                continue
            if self.take(ci, ri, req, k, c):
                return True
        return False

    def take(self, ci: int, ri: int, req: ExactRequest, k: int, c: Candidate) -> bool:
        if not req.admin_access and (c.id in self.a.in_use or c.id in self.picked):
            return False
        if self.a._extended and tainted(self.a.features, req, c.device):
            return False  # before the counters are taken: a tainted device takes none
        if self.ext is not None and not self.ext.check(req, c):
            return False
        added: list[_Constraint] = []
        for con in self.constraints[ci]:
            if not con.add(req.name, c.device):
                for a in added:
                    a.remove(req.name)
                return False
            added.append(con)
        undo = self.ext.commit(req, c) if self.ext is not None else None
        if self.ext is not None and undo is None:  # cannot happen: check() saw the same state
            for a in added:
                a.remove(req.name)
            return False
        multi = self.ext is not None and self.ext.multi(c)
        if not multi:
            self.picked.add(c.id)
        self.result[ci].append((req.name, c))
        if self.devices(ci, ri, req, k + 1):
            return True
        self.result[ci].pop()
        if not multi:
            self.picked.discard(c.id)
        if undo is not None:
            undo()
        for a in added:
            a.remove(req.name)
        return False


def allocation_result(picks: list[tuple[str, Candidate]], node: Node, claim: ResourceClaim | None = None,
                      sharing: Sharing = Sharing(), new_id: Callable[[], str] | None = None) -> dict[str, Any]:
    """``status.allocation`` for one claim, as upstream's allocator builds it. With
    DRAConsumableCapacity a shareable device's result gets a share ID (from ``new_id``) and
    the capacity it consumes."""
    results = []
    for req, c in picks:
        r: dict[str, Any] = {"request": req, "driver": c.slice.driver, "pool": c.pool.name, "device": c.device.name}
        if sharing.consumable and c.device.allow_multiple_allocations and new_id is not None:
            r.update(share_fields(_request_named(claim, req), c, new_id))
        results.append(r)
    out: dict[str, Any] = {"devices": {"results": results}}
    if sharing.partitionable and any(c.slice.per_device_node_selection for _, c in picks):
        selector = merged_node_selector([c for _, c in picks], node)
        if selector is not None:
            out["nodeSelector"] = selector
        return out
    selector = None
    for _, c in picks:
        if c.slice.node_name:
            selector = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node.name]}]}]}
            break
        if c.slice.node_selector is not None and selector is None:
            selector = c.slice.raw.get("spec", {}).get("nodeSelector")
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def _request_named(claim: ResourceClaim | None, name: str) -> ExactRequest | None:
    for r in claim.spec.requests if claim is not None else ():
        for x in (r.exactly,) if r.exactly is not None else r.first_available:
            if x is not None and x.name == name:
                return x
    return None
