"""Can the cluster hold a PodGroup's ``minResources`` at all? (scheduler-plugins
``core.CheckClusterResource`` and ``getNodeResource``, v0.34.7.)

Why a module of its own: the check walks the nodes subtracting each node's free resources
(allocatable minus requested, the group's own pods counted as free) from what the group
still needs, and when something is left it reports ``resource gap: <map>`` where the map
is Go's ``%v`` of ``map[ResourceName]resource.Quantity``. Go prints such a Quantity as its
raw struct: ``{{value scale} {<nil>}  Format}`` (int64 amount, no inf.Dec, the cached
string emptied by ``Sub``). To print the same text, amounts are kept here as upstream's
``int64Amount`` (value, scale) and subtracted with its rules (the result takes the smaller
scale; subtracting zero changes nothing). Quantities that upstream would hold as inf.Dec
(outside its int64 fast path) are approximated by their exact int64 form; Go would print a
pointer address there, which no one can match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.podgroup import POD_GROUP_LABEL
from kubesched.api.quantity import parse_quantity
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar_resource_name
from kubesched.framework.types import NodeInfo

_NUMBER = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?([a-zA-Z]*[+-]?[0-9]*)")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXP = re.compile(r"[eE]([+-]?[0-9]+)")


@dataclass(slots=True)
class GoQuantity:
    """A ``resource.Quantity`` in its int64 form: ``value * 10**scale``."""

    value: int
    scale: int
    format: str

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def sub(self, y: "GoQuantity") -> None:
        """``Quantity.Sub`` on int64 amounts (``int64Amount.Add`` of the negation)."""
        if self.value == 0:
            self.format = y.format
        if y.value == 0:
            return
        if self.value == 0:
            self.value, self.scale = -y.value, y.scale
        elif self.scale == y.scale:
            self.value -= y.value
        elif self.scale > y.scale:
            self.value = self.value * 10 ** (self.scale - y.scale) - y.value
            self.scale = y.scale
        else:
            self.value -= y.value * 10 ** (y.scale - self.scale)

    def go_repr(self) -> str:
        return f"{{{{{self.value} {self.scale}}} {{<nil>}}  {self.format}}}"


def parse_go_quantity(v: Any) -> GoQuantity:
    """The (value, scale, format) upstream's ``ParseQuantity`` fast path produces."""
    q = parse_quantity(v)  # validates; also the fallback
    m = _NUMBER.fullmatch(v if isinstance(v, str) else repr(v))
    if m is not None:
        sign, num, denom, suffix = m.group(1), m.group(2) or "0", m.group(3) or "", m.group(4)
        neg = -1 if sign == "-" else 1
        e = _EXP.fullmatch(suffix)
        if suffix in _DECIMAL or e is not None:
            exponent = _DECIMAL[suffix] if e is None else int(e.group(1))
            scale = exponent - len(denom)
            if 18 - len(num) - len(denom) >= 0 and scale >= -9:
                return GoQuantity(neg * int(num + denom), scale, "DecimalSI" if e is None else "DecimalExponent")
        elif suffix in _BINARY and not denom:
            exponent = _BINARY[suffix]
            if 15 - len(num) - int(exponent * 3 / 10) - 1 >= 0:
                return GoQuantity(neg * (int(num) << exponent), 0, "BinarySI")
    nanos = int(q.amount * 10**9)
    scale = -9
    while nanos and nanos % 10 == 0 and scale < 0:
        nanos //= 10
        scale += 1
    return GoQuantity(nanos, scale, str(q.format))


def node_free(info: NodeInfo, group_full_name: str) -> dict[str, GoQuantity]:
    """``util.ResourceList(getNodeResource(...))``: what the node has left, the pods of the
    group itself (bound or assumed) counted as not there."""
    requested = dict(info.requested)
    n_pods = len(info.pods)
    for p in info.pods:
        label = p.labels.get(POD_GROUP_LABEL, "")
        if label and f"{p.namespace}/{label}" == group_full_name:
            n_pods -= 1
            for k, v in p.requests.items():
                if k != PODS:
                    requested[k] = requested.get(k, 0) - v
    alloc = info.allocatable
    free = {
        CPU: GoQuantity(alloc.get(CPU, 0) - requested.get(CPU, 0), -3, "DecimalSI"),
        MEMORY: GoQuantity(alloc.get(MEMORY, 0) - requested.get(MEMORY, 0), 0, "BinarySI"),
        PODS: GoQuantity(alloc.get(PODS, 0) - n_pods, 0, "BinarySI"),
        EPHEMERAL_STORAGE: GoQuantity(alloc.get(EPHEMERAL_STORAGE, 0) - requested.get(EPHEMERAL_STORAGE, 0),
                                      0, "BinarySI"),
    }
    for k, v in alloc.items():
        if is_scalar_resource_name(k):
            fmt = "BinarySI" if k.startswith("hugepages-") else "DecimalSI"
            free[k] = GoQuantity(v - requested.get(k, 0), 0, fmt)
    return free


def check_cluster_resource(nodes: Iterable[NodeInfo], request: Mapping[str, GoQuantity],
                           group_full_name: str) -> str | None:
    """None when the nodes together can hold ``request``; else upstream's error text."""
    need = {k: GoQuantity(q.value, q.scale, q.format) for k, q in request.items()}
    for info in nodes:
        if info.node is None:
            continue
        free = node_free(info, group_full_name)
        for name in list(need):
            q = need[name]
            if name in free:
                q.sub(free[name])
            if q.sign() <= 0:
                del need[name]
        if not need:
            return None
    body = " ".join(f"{k}:{need[k].go_repr()}" for k in sorted(need))
    return f"resource gap: map[{body}]"
