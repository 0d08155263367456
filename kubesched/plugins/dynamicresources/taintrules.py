"""DeviceTaintRules applied to ResourceSlices (upstream ``resourceslice/tracker``).

Why this exists: with device taint rules enabled, upstream's scheduler allocates from the
slices its ResourceSlice tracker hands out: each device gets, after its own taints, the
taint of every DeviceTaintRule whose selector matches it (``applyPatches``): ``driver``,
``pool`` and ``device`` must equal the device's when set, and a rule without a
``deviceSelector`` taints every device (as the tracker does, and its test "patch-all-slices"
expects). Rules of 1.34's ``v1alpha3`` may also name a
``deviceClassName`` (a missing class: the rule does not apply; the class's selectors must
be true) and CEL ``selectors`` (a runtime error: the device does not match); both fields
were removed in 1.35. A rule whose CEL does not compile is skipped, as the tracker skips a
slice it cannot patch.

:class:`TaintedSlices` keeps the patched list while neither the slices nor the rules (nor,
for rules naming a class, the classes) change, so the allocator's per-slice-list index
survives from pod to pod.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.devicetaints import DeviceTaintRule
from kubesched.api.dra import Device, DeviceClass, ResourceSlice
from kubesched.plugins.dynamicresources.cel import CelError, compile_selector


def _cel_true(exprs: Sequence[str], driver: str, device: Device) -> bool | None:
    """All true (True), one false or failing at run time (False), one not compiling (None)."""
    for e in exprs:
        try:
            sel = compile_selector(e)
        except CelError:
            return None
        try:
            if not sel.matches(driver, device):
                return False
        except CelError:
            return False
    return True


def _rule_taints_device(rule: DeviceTaintRule, s: ResourceSlice, d: Device,
                        classes: Callable[[str], DeviceClass | None]) -> bool | None:
    if rule.driver is not None and rule.driver != s.driver:
        return False
    if rule.pool is not None and rule.pool != s.pool:
        return False
    if rule.device is not None and rule.device != d.name:
        return False
    if rule.device_class_name is not None:
        cls = classes(rule.device_class_name)
        if cls is None:
            return False
        ok = _cel_true(cls.selectors, s.driver, d)
        if not ok:
            return ok
    return _cel_true(rule.selectors, s.driver, d)


def apply_rules(slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule],
                classes: Callable[[str], DeviceClass | None]) -> list[ResourceSlice]:
    """The slices with every matching rule's taint appended to each device's taints (rules
    in name order; a slice no rule touches is the same object)."""
    ordered = sorted(rules, key=lambda r: r.name)
    out = []
    for s in slices:
        added: dict[int, list[Any]] = {}
        for rule in ordered:
            hits = [(i, _rule_taints_device(rule, s, d, classes)) for i, d in enumerate(s.devices)]
            if any(h is None for _, h in hits):
                continue  # a selector that does not compile: the rule is not applied
            for i, h in hits:
                if h:
                    added.setdefault(i, []).append(rule.taint)
        if not added:
            out.append(s)
            continue
        devices = tuple(dataclasses.replace(d, taints=(*d.taints, *added[i])) if i in added else d
                        for i, d in enumerate(s.devices))
        out.append(dataclasses.replace(s, devices=devices))
    return out


class TaintedSlices:
    """The patched slice list, recomputed only when its inputs change."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._out: list[ResourceSlice] = []

    def get(self, slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule],
            classes: Callable[[str], DeviceClass | None], generation: int) -> Sequence[ResourceSlice]:
        if not rules:
            return slices
        by_class = any(r.device_class_name is not None for r in rules)
        key = (id(slices), id(rules), generation if by_class else None)
        if key != self._key:
            self._out = apply_rules(slices, rules, classes)
            self._key = key
        return self._out
