"""Consumable capacity (DRAConsumableCapacity): how much of a device a request takes.

Why this exists: with the gate on, upstream's allocator checks every candidate device
against the request's ``capacity.requests`` (``cmpRequestOverCapacity`` in
``structured/internal/*/consumable_capacity.go``), and a device with
``allowMultipleAllocations`` can be allocated again and again while its capacities last.
The rules, per capacity of the device:

- the amount consumed is the request's amount (a name without a domain means the
  driver's), else the policy's ``default``, else the whole capacity;
- a ``validRange`` rounds a request up to ``min`` and then to ``min + k*step``; a list of
  ``validValues`` rounds it up to the first value at least as large;
- the amount must then satisfy the policy (equal to the default; within ``max`` and on a
  step; one of the valid values), and what earlier allocations of the device consumed plus
  what this search already took plus this amount must not exceed the capacity.

A request naming a capacity the device does not have skips the device. Ranges use
upstream's integer path (``Quantity.Value()``, rounding up), which every integer range
takes; fractional ranges (DRAFractionalCapacityRange, 1.37) are not distinguished.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from kubesched.api.dra import Device, ExactRequest
from kubesched.api.drasharing import CapacityPolicy
from kubesched.api.quantity import Format, Quantity


class CapacityError(Exception):
    """The request cannot be checked at all (upstream aborts the allocation)."""


Consumed = dict[str, Fraction]  # qualified capacity name -> amount


def _resolve(name: str, driver: str, device: Device) -> str | None:
    """The qualified capacity ``name`` refers to on ``device`` (upstream ``resolveCapacityName``)."""
    qualified = name if "/" in name else f"{driver}/{name}"
    return qualified if qualified in device.capacity else None


def resolve_requests(req: ExactRequest, driver: str, device: Device) -> Consumed | None:
    """The request's amounts by qualified name; None when the device lacks one of them."""
    out: Consumed = {}
    for name, q in req.capacity or ():
        key = _resolve(name, driver, device)
        if key is None:
            return None
        if key in out:
            raise CapacityError(f"capacity {key.rpartition('/')[2]!r} requested both as {name!r} and in another "
                                "spelling")
        out[key] = q.amount
    return out


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def consumed_amount(requested: Fraction | None, total: Fraction, pol: CapacityPolicy | None) -> Fraction:
    """Upstream ``calculateConsumedQuantity`` (integer range arithmetic)."""
    if requested is None:
        return pol.default.amount if pol is not None and pol.default is not None else total
    if pol is None:
        return requested
    if pol.min is not None:
        lo = pol.min.amount
        if requested < lo:
            return lo
        if pol.step is None:
            return requested
        step, base = pol.step.value(), pol.min.value()
        added = _ceil(requested) - base
        n = added // step + (1 if added % step else 0)
        return Fraction(base + step * n)
    for v in pol.valid_values:
        if requested <= v.amount:
            return v.amount
    return requested


def violates(amount: Fraction, pol: CapacityPolicy | None) -> bool:
    """Upstream ``violatesPolicy``."""
    if pol is None or (pol.default is not None and amount == pol.default.amount):
        return False
    if pol.min is not None:
        if pol.max is not None and amount > pol.max.amount:
            return True
        if pol.step is not None and (_ceil(amount) - pol.min.value()) % pol.step.value() != 0:
            return True
        return False
    if pol.valid_values:
        return all(amount != v.amount for v in pol.valid_values)
    return False


def fits(req: ExactRequest, driver: str, device: Device, allocated: Mapping[str, Fraction],
         allocating: Mapping[str, Fraction]) -> Consumed | None:
    """What allocating ``device`` for ``req`` consumes, or None when it does not fit
    (upstream ``cmpRequestOverCapacity``); CapacityError when allocation must stop."""
    asked = resolve_requests(req, driver, device)
    if asked is None:
        return None
    consumed: Consumed = {}
    for name, cap in device.capacity.items():
        amount = consumed_amount(asked.get(name), cap.amount, device.policies.get(name))
        if amount < 0:
            raise CapacityError(f"capacity {name!r}: capacity value is negative")
        consumed[name] = amount
    for name, cap in device.capacity.items():
        if violates(consumed[name], device.policies.get(name)):
            return None
        if allocated.get(name, Fraction(0)) + consumed[name] + allocating.get(name, Fraction(0)) > cap.amount:
            return None
    return consumed


def status_capacity(device: Device, consumed: Consumed) -> dict[str, str]:
    """``consumedCapacity`` of an allocation result: names as the slice spells them, values
    in the capacity's own format."""
    out = {}
    for name, amount in consumed.items():
        fmt = device.capacity[name].format if name in device.capacity else Format.DECIMAL_SI
        out[device.capacity_names.get(name, name)] = str(Quantity(amount=amount, format=fmt))
    return out
