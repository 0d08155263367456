"""Node taints as the node controllers manage them, and tolerations as taint eviction reads them.

* :func:`swap_taints`: upstream's ``SwapNodeControllerTaint``: add taints (stamped with
  ``timeAdded``; a taint with the same key and effect is replaced), remove others (same
  key and effect), one read-modify-write of the Node retried on conflict;
* :data:`CONDITION_TAINTS`: which node condition means which NoSchedule taint
  (``TaintNodesByCondition``), plus ``node.kubernetes.io/unschedulable`` for cordoned nodes;
* :func:`matching_tolerations` and :func:`min_toleration_seconds`: upstream's
  ``GetMatchingTolerations`` and the taint eviction controller's ``getMinTolerationTime``.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api.defaults import TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Taint, Toleration
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import timestamp, update_with_retry
from kubesched.server.controllers.informer import Obj

NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
NOT_READY_NO_EXECUTE = {"key": TAINT_NODE_NOT_READY, "effect": NO_EXECUTE}
UNREACHABLE_NO_EXECUTE = {"key": TAINT_NODE_UNREACHABLE, "effect": NO_EXECUTE}

# condition type -> condition status -> NoSchedule taint key (nodeConditionToTaintKeyStatusMap)
CONDITION_TAINTS: dict[str, dict[str, str]] = {
    "Ready": {"False": TAINT_NODE_NOT_READY, "Unknown": TAINT_NODE_UNREACHABLE},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
MANAGED_NO_SCHEDULE = frozenset([TAINT_UNSCHEDULABLE] + [k for m in CONDITION_TAINTS.values() for k in m.values()])


def taints_of(node: Obj | None) -> list[dict[str, Any]]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or [] if isinstance(t, dict)]


def has_taint(node: Obj | None, taint: dict[str, Any]) -> bool:
    return any(t.get("key") == taint["key"] and t.get("effect") == taint["effect"] for t in taints_of(node))


def desired_no_schedule(node: Obj) -> list[dict[str, Any]]:
    """The NoSchedule taints ``doNoScheduleTaintingPass`` wants for the node's conditions."""
    out = []
    for c in (node.get("status") or {}).get("conditions") or []:
        key = CONDITION_TAINTS.get(str(c.get("type")), {}).get(str(c.get("status")))
        if key:
            out.append({"key": key, "effect": NO_SCHEDULE})
    if (node.get("spec") or {}).get("unschedulable"):
        out.append({"key": TAINT_UNSCHEDULABLE, "effect": NO_SCHEDULE})
    return out


def swap_taints(registry: Registry, name: str, add: list[dict[str, Any]], remove: list[dict[str, Any]],
                now: float) -> Obj | None:
    """Add ``add`` and remove ``remove`` (matched by key and effect) on node ``name``."""
    stamped = [dict(t, timeAdded=timestamp(now)) for t in add]

    def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return bool(a.get("key") == b.get("key") and a.get("effect") == b.get("effect"))

    def mutate(cur: Obj) -> Obj | None:
        taints = taints_of(cur)
        out = [t for t in taints if not any(same(t, r) for r in remove)]
        for t in stamped:
            existing = next((o for o in out if same(o, t)), None)
            if existing is not None and existing.get("value", "") == t.get("value", ""):
                continue
            out = [o for o in out if not same(o, t)] + [t]
        if out == taints:
            return None
        new = copy.deepcopy(cur)
        new.setdefault("spec", {})["taints"] = out
        if not out:
            new["spec"].pop("taints")
        return new

    return update_with_retry(lambda: registry.get("nodes", None, name), mutate,
                             lambda o: registry.update("nodes", None, name, o))


def no_execute(node: Obj | None) -> list[Taint]:
    out = []
    for i, t in enumerate(taints_of(node)):
        if t.get("effect") != NO_EXECUTE:
            continue
        try:
            out.append(Taint.parse(t, f"spec.taints[{i}]"))
        except DecodeError:
            continue
    return out


def tolerations_of(pod: Obj) -> list[Toleration]:
    out = []
    for i, t in enumerate((pod.get("spec") or {}).get("tolerations") or []):
        try:
            out.append(Toleration.parse(t, f"spec.tolerations[{i}]"))
        except DecodeError:
            continue
    return out


def matching_tolerations(taints: list[Taint], tolerations: list[Toleration]) -> tuple[bool, list[Toleration]]:
    """``GetMatchingTolerations``: whether every taint is tolerated, and by which (the
    first matching toleration of each taint)."""
    if not taints:
        return True, []
    used = []
    for taint in taints:
        tol = next((t for t in tolerations if t.tolerates(taint)), None)
        if tol is None:
            return False, []
        used.append(tol)
    return True, used


def min_toleration_seconds(used: list[Toleration]) -> float:
    """``getMinTolerationTime``: the smallest tolerationSeconds (0 if any is <= 0, or if
    there are no tolerations); -1 when none sets it (tolerated forever)."""
    if not used:
        return 0.0
    best: int | None = None
    for t in used:
        if t.toleration_seconds is None:
            continue
        if t.toleration_seconds <= 0:
            return 0.0
        best = t.toleration_seconds if best is None else min(best, t.toleration_seconds)
    return -1.0 if best is None else float(best)
