"""Validation of the other kinds the scheduler reads: Node (``ValidateNode``), Namespace
(``ValidateNamespace``), PriorityClass (scheduling ``ValidatePriorityClass``),
PodDisruptionBudget (policy ``ValidatePodDisruptionBudget``, then the generic metadata
checks every kind gets) and the PodGroup custom resource (metadata only: its schema's
checks stay with :mod:`kubesched.api.podgroup`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.quantity import Quantity
from kubesched.api.validation.field import (
    GoJSON, GoStruct, duplicate, forbidden, invalid, not_supported, required,
)
from kubesched.api.validation.meta import (
    name_is_dns_label, name_is_dns_subdomain, name_is_path_segment, validate_label_name,
    validate_label_selector, validate_object_meta,
)
from kubesched.api.validation.resources import validate_node_resources
from kubesched.api.validation.scheduling import TAINT_EFFECTS
from kubesched.api.validation.strings import (
    is_qualified_name, is_valid_label_value, is_valid_percent, label_value_ok,
)

__all__ = [
    "HIGHEST_USER_DEFINABLE_PRIORITY", "SYSTEM_CRITICAL_PRIORITY", "SYSTEM_PRIORITY_CLASS_VALUES",
    "validate_namespace", "validate_node", "validate_pdb", "validate_pod_group", "validate_priority_class",
]

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
# upstream pkg/apis/scheduling SystemPriorityClasses(): name -> value (never global defaults)
SYSTEM_PRIORITY_CLASS_VALUES = {
    "system-node-critical": SYSTEM_CRITICAL_PRIORITY + 1000,
    "system-cluster-critical": SYSTEM_CRITICAL_PRIORITY,
}
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_node(meta: Mapping[str, Any], labels: Mapping[str, str], annotations: Mapping[str, str],
                  taints: list[Any], capacity: Mapping[str, Quantity], allocatable: Mapping[str, Quantity]) -> None:
    """``ValidateNode``: metadata, taints (reported under ``metadata.taints``, as upstream
    reports them), capacity and allocatable."""
    validate_object_meta(meta, labels, annotations, name_is_dns_subdomain, namespaced=False)
    unique: dict[str, set[str]] = {}
    for i, t in enumerate(taints):
        path = f"metadata.taints[{i}]"
        key, value, effect = t.get("key") or "", t.get("value") or "", t.get("effect") or ""
        validate_label_name(key, f"{path}.key")
        if not label_value_ok(value):
            raise invalid(f"{path}.value", value, ";".join(is_valid_label_value(value)))
        if not effect:
            raise required(f"{path}.effect")
        if effect not in TAINT_EFFECTS:
            raise not_supported(f"{path}.effect", GoJSON(effect), TAINT_EFFECTS)
        keys = unique.setdefault(effect, set())
        if key in keys:
            shown = GoJSON(GoStruct(Key=key, Value=value, Effect=effect, TimeAdded=t.get("timeAdded")))
            raise duplicate(path, shown, "taints must be unique by key and effect pair")
        keys.add(key)
    validate_node_resources(capacity, allocatable)


def validate_namespace(meta: Mapping[str, Any], labels: Mapping[str, str], annotations: Mapping[str, str],
                       spec: Mapping[str, Any]) -> None:
    """``ValidateNamespace``: a DNS-1123 label name; finalizers qualified names."""
    validate_object_meta(meta, labels, annotations, name_is_dns_label, namespaced=False)
    for f in spec.get("finalizers") or ():
        f = str(f)
        msgs = is_qualified_name(f)
        if msgs:
            raise invalid("spec.finalizers", f, msgs[0])
        if "/" not in f and f not in _STANDARD_FINALIZERS:
            raise invalid("spec.finalizers", f, "name is neither a standard finalizer name nor is it fully qualified")


def validate_priority_class(meta: Mapping[str, Any] | None, name: str, value: int, global_default: bool,
                            preemption_policy: str | None) -> None:
    """``ValidatePriorityClass``: ``system-`` names are reserved for the system classes,
    user values are at most 1e9. ``meta`` is None when only the fields are checked."""
    if meta is not None:
        validate_object_meta(meta, {}, {}, name_is_dns_subdomain, namespaced=False)
    if name.startswith("system-"):
        err = ""
        if name not in SYSTEM_PRIORITY_CLASS_VALUES:
            err = f"{name} is not a known system priority class"
        elif SYSTEM_PRIORITY_CLASS_VALUES[name] != value:
            err = f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASS_VALUES[name]}"
        elif global_default:
            err = f"globalDefault of {name} PriorityClass must be false"
        if err:
            raise forbidden("metadata.name", "priority class names with 'system-' prefix are reserved for system "
                                             f"use only. error: {err}")
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise forbidden("value", f"maximum allowed value of a user defined priority is "
                                 f"{HIGHEST_USER_DEFINABLE_PRIORITY}")
    if preemption_policy is not None and preemption_policy not in ("PreemptLowerPriority", "Never"):
        if not preemption_policy:
            raise required("preemptionPolicy")
        raise not_supported("preemptionPolicy", GoJSON(preemption_policy), ("PreemptLowerPriority", "Never"))


def _int_or_percent(v: Any, path: str) -> None:
    """``ValidatePositiveIntOrPercent`` then ``IsNotMoreThan100Percent``."""
    if isinstance(v, str):
        msgs = is_valid_percent(v)
        if msgs:
            raise invalid(path, GoJSON(v), msgs[0])
        if int(v[:-1]) > 100:
            raise invalid(path, GoJSON(v), "must not be greater than 100%")
    elif v < 0:
        raise invalid(path, v, "must be greater than or equal to 0")


def validate_pdb(meta: Mapping[str, Any], labels: Mapping[str, str], annotations: Mapping[str, str],
                 spec: Mapping[str, Any]) -> None:
    """``ValidatePodDisruptionBudget`` (spec), then the generic ``ValidateObjectMetaAccessor``
    every create runs after the kind's own checks (names: path segments)."""
    min_a, max_u = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_a is not None and max_u is not None:
        raise invalid("spec", GoJSON(_pdb_spec_json(spec)), "minAvailable and maxUnavailable cannot be both set")
    if min_a is not None:
        _int_or_percent(min_a, "spec.minAvailable")
    if max_u is not None:
        _int_or_percent(max_u, "spec.maxUnavailable")
    validate_label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        raise not_supported("spec.unhealthyPodEvictionPolicy", GoJSON(policy), ("AlwaysAllow", "IfHealthyBudget"))
    validate_object_meta(meta, labels, annotations, name_is_path_segment, namespaced=True)


def _pdb_spec_json(spec: Mapping[str, Any]) -> GoStruct:
    """The internal PodDisruptionBudgetSpec as ``json.Marshal`` prints it: Go field names,
    the selector with its JSON names (empty parts left out)."""
    sel = spec.get("selector")
    shown_sel: GoStruct | None = None
    if isinstance(sel, Mapping):
        shown_sel = GoStruct()
        if sel.get("matchLabels"):
            shown_sel["matchLabels"] = sel["matchLabels"]
        if sel.get("matchExpressions"):
            shown_sel["matchExpressions"] = [
                GoStruct({k: e.get(k) for k in ("key", "operator", "values") if k != "values" or e.get(k)})
                for e in sel["matchExpressions"] if isinstance(e, Mapping)]
    return GoStruct(MinAvailable=spec.get("minAvailable"), Selector=shown_sel,
                    MaxUnavailable=spec.get("maxUnavailable"),
                    UnhealthyPodEvictionPolicy=spec.get("unhealthyPodEvictionPolicy"))


def validate_pod_group(meta: Mapping[str, Any], labels: Mapping[str, str], annotations: Mapping[str, str]) -> None:
    """A custom resource's metadata: a DNS-1123 subdomain name, labels, annotations."""
    validate_object_meta(meta, labels, annotations, name_is_dns_subdomain, namespaced=True)
