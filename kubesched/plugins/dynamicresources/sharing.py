"""What the DRA beta features of a release change in the allocator, and the allocated
state they need.

Why this exists: upstream hands the allocator a ``Features`` value built from the feature
gates and an ``AllocatedState`` gathered from all allocated claims
(``GatherAllocatedState``). With DRAConsumableCapacity on, a result with a ``shareID`` does
not make its device "in use": it adds the capacity it consumed to the device's total and
other requests may share the device; without the gate every allocated device is in use.
With both gates off the allocator runs exactly as before (``Sharing.any`` is false).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.dra import ExactRequest, qualify
from kubesched.framework.dra import DraLister
from kubesched.framework.features import Features
from kubesched.plugins.dynamicresources.capacity import (
    CapacityError, Consumed, consumed_amount, fits, resolve_requests, status_capacity,
)
from kubesched.plugins.dynamicresources.partitions import CounterLedger, CounterSearch
from kubesched.plugins.dynamicresources.pools import Candidate, DeviceID


@dataclass(frozen=True, slots=True)
class Sharing:
    """The allocator features upstream's ``Features`` carries for these two gates."""

    partitionable: bool = False  # DRAPartitionableDevices
    consumable: bool = False  # DRAConsumableCapacity

    @classmethod
    def of(cls, fts: Features) -> "Sharing":
        return cls(fts.enabled("DRAPartitionableDevices"), fts.enabled("DRAConsumableCapacity"))

    @property
    def any(self) -> bool:
        return self.partitionable or self.consumable


@dataclass(slots=True)
class AllocatedState:
    """Upstream ``AllocatedState``: devices allocated exclusively, shared allocations, and the
    capacity the shared allocations consume per device (qualified names)."""

    exclusive: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[DeviceID, str]] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def allocated(self, d: DeviceID) -> bool:
        """Upstream ``IsDeviceAllocated``: exclusively, shared, or with consumed capacity."""
        return d in self.exclusive or d in self.capacity or any(s[0] == d for s in self.shared)


def allocated_state(lister: DraLister, consumable: bool) -> AllocatedState:
    """Upstream ``GatherAllocatedState`` over allocated and in-flight claims."""
    st = AllocatedState()
    for claims in (lister.resource_claims(), list(lister.in_flight.values())):
        for c in claims:
            shared = list(c.shared_results) if consumable else []
            for d in c.allocated_devices:
                r = next((x for x in shared if x.device == d), None)
                if r is None:
                    st.exclusive.add(d)
                    continue
                shared.remove(r)
                st.shared.add((d, r.share_id))
                if r.consumed:
                    used = st.capacity.setdefault(d, {})
                    for name, q in r.consumed:
                        key = qualify(name, d[0])
                        used[key] = used.get(key, Fraction(0)) + q.amount
    return st


class SharingSearch:
    """What one allocation search adds for the two gates (upstream ``allocateDevice``): the
    counters a device takes and the capacity shared devices give away.

    Upstream's order is kept: :meth:`check` runs before the claim's constraints (it takes the
    device's counters), :meth:`commit` after them (it takes the capacity of a shareable
    device). When a constraint then rejects the device, upstream does not give the counters
    back for the rest of that search, and neither does this; nor does it give back the
    counters of a shareable device when the search backtracks over it.
    """

    def __init__(self, sharing: Sharing, state: AllocatedState, ledger: CounterLedger) -> None:
        self.sharing = sharing
        self.state = state
        self.counters = CounterSearch(ledger) if sharing.partitionable else None
        self.allocating: dict[DeviceID, dict[str, Fraction]] = {}

    def multi(self, c: Candidate) -> bool:
        """The device may be allocated more than once (it then never becomes "in use")."""
        return self.sharing.consumable and c.device.allow_multiple_allocations

    def capacity_fits(self, req: ExactRequest, c: Candidate, alone: bool = False) -> Consumed | None:
        """``alone``: against earlier allocations only, as upstream lists the devices of an
        ``All`` request before the search starts."""
        try:
            return fits(req, c.slice.driver, c.device, self.state.capacity.get(c.id, {}),
                        {} if alone else self.allocating.get(c.id, {}))
        except CapacityError as exc:  # the allocator turns it into an AllocationError
            raise CapacityError(f"request {req.name}, device {'/'.join(c.id)}: {exc}") from None

    def check(self, req: ExactRequest, c: Candidate) -> bool:
        """Capacity and counters; True: the device may be taken (its counters now are)."""
        if not self.sharing.partitionable and c.device.consumes_counters:
            return False
        if self.sharing.consumable and self.capacity_fits(req, c) is None:
            return False
        if self.counters is not None and c.device.consumes_counters:
            in_use = self.multi(c) and (c.id in self.state.capacity or c.id in self.allocating)
            if not in_use and not self.counters.take(c):
                return False
        return True

    def commit(self, req: ExactRequest, c: Candidate) -> Callable[[], None] | None:
        """After the constraints: take a shareable device's capacity. The undo, or None when
        the device does not fit after all."""
        consumed = self.capacity_fits(req, c) if self.sharing.consumable else {}
        if consumed is None:
            return None
        if self.multi(c):
            mine = self.allocating.setdefault(c.id, {})
            for k, v in consumed.items():
                mine[k] = mine.get(k, Fraction(0)) + v

            def undo_capacity() -> None:
                left = self.allocating[c.id]
                for k, v in consumed.items():
                    left[k] -= v
                if all(v == 0 for v in left.values()):
                    del self.allocating[c.id]
            return undo_capacity
        counters = self.counters

        def undo_counters() -> None:
            if counters is not None and c.device.consumes_counters:
                counters.give_back(c)
        return undo_counters


def share_fields(req: ExactRequest | None, c: Candidate, new_id: Callable[[], str]) -> dict[str, Any]:
    """``shareID`` and ``consumedCapacity`` of the result for a shareable device (upstream
    ``GetConsumedCapacityFromRequest``; the ID is a random UUID there, ``new_id``'s here)."""
    asked = resolve_requests(req, c.slice.driver, c.device) if req is not None else {}
    consumed = {name: consumed_amount((asked or {}).get(name), cap.amount, c.device.policies.get(name))
                for name, cap in c.device.capacity.items()}
    out: dict[str, Any] = {"shareID": new_id()}
    if consumed:
        out["consumedCapacity"] = status_capacity(c.device, consumed)
    return out


def share_ids(claim_uid: str) -> Callable[[], str]:
    """Share IDs for the shareable devices of one claim's allocation: UUIDs as upstream's,
    but derived from the claim's UID and the result's position (upstream draws them at
    random), so that a simulation repeats and the scheduler's random stream is not touched."""
    n = itertools.count()
    return lambda: str(uuid.uuid5(uuid.NAMESPACE_URL, f"kubesched.io/share/{claim_uid}/{next(n)}"))
