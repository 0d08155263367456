"""Device taints, tolerations and DeviceTaintRules (DRA, resource.k8s.io).

Why this exists: with the DRADeviceTaints gate a device in a ResourceSlice may carry
``taints`` (and a cluster-scoped DeviceTaintRule may add one to every device it selects);
the allocator then gives a device only to a request whose ``tolerations`` tolerate each of
its ``NoSchedule`` and ``NoExecute`` taints. Taints with another effect (``None``, or one a
newer release may add) are ignored, as upstream's consumers must treat them.

Upstream: ``k8s.io/api/resource/v1/types.go`` (DeviceTaint, DeviceToleration),
``v1alpha3``/``v1beta2`` ``types.go`` (DeviceTaintRule; its ``deviceClassName`` and
``selectors`` exist up to 1.34 only), ``dynamic-resource-allocation/resourceclaim``
``ToleratesTaint``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.drafields import _list, _map, _str
from kubesched.api.errors import DecodeError

NO_SCHEDULE, NO_EXECUTE, NONE = "NoSchedule", "NoExecute", "None"
EFFECTS_THAT_PREVENT_ALLOCATION = frozenset({NO_SCHEDULE, NO_EXECUTE})
OP_EQUAL, OP_EXISTS = "Equal", "Exists"
DEVICE_TAINT_RULE = "DeviceTaintRule"
# the versions upstream serves DeviceTaintRule in: v1alpha3 (1.33-1.35), v1beta2 (1.36), v1 (1.37)
DEVICE_TAINT_RULE_VERSIONS = ("resource.k8s.io/v1alpha3", "resource.k8s.io/v1beta2", "resource.k8s.io/v1")


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str
    operator: str
    value: str
    effect: str


def _str_opt(obj: Any, path: str) -> str:
    return _str(obj, path, required=False)


def parse_taint(obj: Any, path: str) -> DeviceTaint:
    m = _map(obj, path)
    key, effect = _str_opt(m.get("key"), f"{path}.key"), _str_opt(m.get("effect"), f"{path}.effect")
    if not key:
        raise DecodeError("Required value", field=f"{path}.key")
    if not effect:
        raise DecodeError("Required value", field=f"{path}.effect")
    return DeviceTaint(key, _str_opt(m.get("value"), f"{path}.value"), effect)


def parse_taints(obj: Any, path: str) -> tuple[DeviceTaint, ...]:
    return tuple(parse_taint(t, f"{path}[{i}]") for i, t in enumerate(_list(obj, path)))


def parse_tolerations(obj: Any, path: str) -> tuple[DeviceToleration, ...]:
    """A request's ``tolerations`` (operator defaults to Equal), validated as upstream does:
    an empty key needs ``Exists``, ``Exists`` takes no value."""
    out = []
    for i, t in enumerate(_list(obj, path)):
        p = f"{path}[{i}]"
        m = _map(t, p)
        key, value = _str_opt(m.get("key"), f"{p}.key"), _str_opt(m.get("value"), f"{p}.value")
        op = _str_opt(m.get("operator"), f"{p}.operator") or OP_EQUAL
        if op not in (OP_EQUAL, OP_EXISTS):
            raise DecodeError(f'Unsupported value: "{op}": supported values: "Equal", "Exists"', field=f"{p}.operator")
        if not key and op != OP_EXISTS:
            raise DecodeError(f'Invalid value: "{op}": operator must be Exists when `key` is empty',
                              field=f"{p}.operator")
        if op == OP_EXISTS and value:
            raise DecodeError(f'Invalid value: "{value}": value must be empty when `operator` is \'Exists\'',
                              field=f"{p}.value")
        out.append(DeviceToleration(key, op, value, _str_opt(m.get("effect"), f"{p}.effect")))
    return tuple(out)


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """Upstream ``resourceclaim.ToleratesTaint``: an empty effect or key matches any."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == OP_EXISTS:
        return True
    return toleration.operator == OP_EQUAL and toleration.value == taint.value


def taint_prevents_allocation(taints: tuple[DeviceTaint, ...], tolerations: tuple[DeviceToleration, ...]) -> bool:
    """Upstream ``taintPreventsAllocation``: a NoSchedule or NoExecute taint that no
    toleration tolerates; other effects are ignored."""
    for t in taints:
        if t.effect in EFFECTS_THAT_PREVENT_ALLOCATION and not any(tolerates(tol, t) for tol in tolerations):
            return True
    return False


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A DeviceTaintRule: its taint goes to every device its ``deviceSelector`` matches (every
    device when it has none, as upstream's ResourceSlice tracker applies rules)."""

    name: str
    driver: str | None
    pool: str | None
    device: str | None
    device_class_name: str | None  # 1.34's v1alpha3 only
    selectors: tuple[str, ...]  # CEL, 1.34's v1alpha3 only
    taint: DeviceTaint
    raw: dict[str, Any] = field(compare=False, repr=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "DeviceTaintRule":
        meta = _map(raw.get("metadata"), "metadata")
        name = _str_opt(meta.get("name"), "metadata.name")
        if not name:
            raise DecodeError("Required value", field="metadata.name")
        spec = _map(raw.get("spec"), "spec")
        if spec.get("taint") is None:
            raise DecodeError("Required value", field="spec.taint")
        taint = parse_taint(spec.get("taint"), "spec.taint")
        sel = _map(spec.get("deviceSelector"), "spec.deviceSelector")

        def opt(k: str) -> str | None:
            v = sel.get(k)
            return None if v is None else _str_opt(v, f"spec.deviceSelector.{k}")

        exprs = []
        for i, s in enumerate(_list(sel.get("selectors"), "spec.deviceSelector.selectors")):
            p = f"spec.deviceSelector.selectors[{i}]"
            cel = _map(_map(s, p).get("cel"), f"{p}.cel")
            expr = _str_opt(cel.get("expression"), f"{p}.cel.expression")
            if not expr:
                raise DecodeError("Required value", field=f"{p}.cel.expression")
            exprs.append(expr)
        return cls(name, opt("driver"), opt("pool"), opt("device"), opt("deviceClassName"),
                   tuple(exprs), taint, raw)
