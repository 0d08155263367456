"""The scheduling constraints of a pod spec, validated as core ``ValidatePodSpec`` does:
node selector requirements and affinity (``validateAffinity``), tolerations
(``ValidateTolerations``) and topology spread constraints
(``validateTopologySpreadConstraints``).

Pod affinity terms and spread constraints are checked as the API server checks them:
after ``matchLabelKeys`` / ``mismatchLabelKeys`` have been merged into the label selector
from the pod's labels (``podStrategy.PrepareForCreate``), so a key both in the selector
and in ``matchLabelKeys`` is rejected once the pod carries that label.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.validation.field import (
    GoJSON, duplicate, forbidden, invalid, not_supported, required, type_error,
)
from kubesched.api.validation.meta import (
    name_is_dns_label, string_list, validate_label_name, validate_label_selector,
)
from kubesched.api.validation.strings import (
    decimal_int64, is_dns1123_subdomain, is_valid_label_value, label_value_ok,
)

__all__ = ["TAINT_EFFECTS", "check_label_keys", "validate_affinity", "validate_spread_constraints",
           "validate_tolerations"]

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_IN_NOTIN = "must be specified when `operator` is 'In' or 'NotIn'"
_NO_VALUES = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
_REQ = "requiredDuringSchedulingIgnoredDuringExecution"
_PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def _obj(obj: Any, path: str, go_type: str) -> Mapping[str, Any]:
    if type(obj) is dict:  # the common case, without the ABC check's cost
        return obj
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise type_error(path, obj, go_type, "object")
    return obj


def _items(obj: Any, path: str, go_type: str) -> list[Any]:
    if type(obj) is list:
        return obj
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise type_error(path, obj, go_type, "array")
    return obj


def _int(obj: Any, path: str, go_type: str) -> int:
    if obj is None:
        return 0
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise type_error(path, obj, go_type, "int32")
    return obj


# -- node affinity ---------------------------------------------------------------------------
def _node_requirement(rq: Any, path: str, allow_invalid_values: bool) -> None:
    """``ValidateNodeSelectorRequirement``."""
    rq = _obj(rq, path, "NodeSelectorRequirement")
    op = rq.get("operator") or ""
    values = string_list(rq.get("values"), f"{path}.values", "NodeSelectorRequirement.values")
    if op in ("In", "NotIn"):
        if not values:
            raise required(f"{path}.values", _IN_NOTIN)
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise forbidden(f"{path}.values", _NO_VALUES)
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            raise required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
    else:
        raise invalid(f"{path}.operator", GoJSON(op), "not a valid selector operator")
    key = rq.get("key") or ""
    validate_label_name(key if isinstance(key, str) else str(key), f"{path}.key")
    if not allow_invalid_values:
        for i, v in enumerate(values):
            if not label_value_ok(v):
                raise invalid(f"{path}.values[{i}]", v, is_valid_label_value(v)[0])


def _field_requirement(rq: Any, path: str) -> None:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name`` In/NotIn one name."""
    rq = _obj(rq, path, "NodeSelectorRequirement")
    values = string_list(rq.get("values"), f"{path}.values", "NodeSelectorRequirement.values")
    op = rq.get("operator") or ""
    if op in ("In", "NotIn"):
        if len(values) != 1:
            raise required(f"{path}.values",
                           "must be only one value when `operator` is 'In' or 'NotIn' for node field selector")
    else:
        raise invalid(f"{path}.operator", GoJSON(op), "not a valid selector operator")
    key = rq.get("key") or ""
    if key != "metadata.name":
        raise invalid(f"{path}.key", key, "not a valid field selector key")
    for i, v in enumerate(values):
        msgs = is_dns1123_subdomain(v)
        if msgs:
            raise invalid(f"{path}.values[{i}]", v, msgs[0])


def _node_selector_term(term: Any, path: str, allow_invalid_values: bool) -> None:
    term = _obj(term, path, "NodeSelectorTerm")
    for j, rq in enumerate(_items(term.get("matchExpressions"), f"{path}.matchExpressions", "matchExpressions")):
        _node_requirement(rq, f"{path}.matchExpressions[{j}]", allow_invalid_values)
    for j, rq in enumerate(_items(term.get("matchFields"), f"{path}.matchFields", "matchFields")):
        _field_requirement(rq, f"{path}.matchFields[{j}]")


def _node_affinity(na: Mapping[str, Any], path: str) -> None:
    req = na.get(_REQ)
    if req is not None:
        rp = f"{path}.{_REQ}"
        terms = _items(_obj(req, rp, "NodeSelector").get("nodeSelectorTerms"), f"{rp}.nodeSelectorTerms",
                       "NodeSelector.nodeSelectorTerms")
        if not terms:
            raise required(f"{rp}.nodeSelectorTerms", "must have at least one node selector term")
        for i, term in enumerate(terms):
            _node_selector_term(term, f"{rp}.nodeSelectorTerms[{i}]", False)
    pp = f"{path}.{_PREF}"
    for i, t in enumerate(_items(na.get(_PREF), pp, "PreferredSchedulingTerm")):
        t = _obj(t, f"{pp}[{i}]", "PreferredSchedulingTerm")
        w = _int(t.get("weight"), f"{pp}[{i}].weight", "PreferredSchedulingTerm.weight")
        if not 0 < w <= 100:
            raise invalid(f"{pp}[{i}].weight", w, "must be in the range 1-100")
        # upstream allows invalid label values in preferences: they can still match one node
        _node_selector_term(t.get("preference") or {}, f"{pp}[{i}].preference", True)


# -- pod affinity ----------------------------------------------------------------------------
def _label_keys(keys: list[str], sel: Any, path: str) -> None:
    """``validateLabelKeys``."""
    if keys and sel is None:
        raise forbidden(path, "must not be specified when labelSelector is not set")
    for i, k in enumerate(keys):
        validate_label_name(k, f"{path}[{i}]")


def check_label_keys(path: str, mlk: list[str], mmlk: list[str], sel: Any, labels: Mapping[str, str]) -> None:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys`` against the selector as merged."""
    _label_keys(mlk, sel, f"{path}.matchLabelKeys")
    _label_keys(mmlk, sel, f"{path}.mismatchLabelKeys")
    if sel is not None and mlk:
        sel = _obj(sel, path, "LabelSelector")
        index = {k: i for i, k in enumerate(mlk)}
        seen = set(_obj(sel.get("matchLabels"), path, "LabelSelector.matchLabels"))
        exprs = [str(e.get("key") or "") for e in _items(sel.get("matchExpressions"), path,
                                                          "LabelSelector.matchExpressions") if isinstance(e, Mapping)]
        exprs += [k for k in mlk if k in labels] + [k for k in mmlk if k in labels]
        for key in exprs:
            if key in index and key in seen:
                raise invalid(f"{path}[{index[key]}]", key, "exists in both matchLabelKeys and labelSelector")
            seen.add(key)
    mismatch = set(mmlk)
    for i, k in enumerate(mlk):
        if k in mismatch:
            raise invalid(f"{path}.matchLabelKeys[{i}]", k, "exists in both matchLabelKeys and mismatchLabelKeys")


def _pod_affinity_term(term: Any, path: str, labels: Mapping[str, str]) -> None:
    """``validatePodAffinityTerm``."""
    term = _obj(term, path, "PodAffinityTerm")
    sel = term.get("labelSelector")
    validate_label_selector(sel, f"{path}.labelSelector")
    validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for ns in string_list(term.get("namespaces"), f"{path}.namespaces", "PodAffinityTerm.namespaces"):
        msgs = name_is_dns_label(ns, False)
        if msgs:
            raise invalid(f"{path}.namespace", ns, msgs[0])
    check_label_keys(path, string_list(term.get("matchLabelKeys"), f"{path}.matchLabelKeys", "matchLabelKeys"),
                     string_list(term.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys", "mismatchLabelKeys"),
                     sel, labels)
    tk = term.get("topologyKey") or ""
    if not tk:
        raise required(f"{path}.topologyKey", "can not be empty")
    validate_label_name(tk, f"{path}.topologyKey")


def _pod_affinity(pa: Mapping[str, Any], path: str, labels: Mapping[str, str]) -> None:
    rp = f"{path}.{_REQ}"
    for i, term in enumerate(_items(pa.get(_REQ), rp, "PodAffinityTerm")):
        _pod_affinity_term(term, f"{rp}[{i}]", labels)
    pp = f"{path}.{_PREF}"
    for i, wt in enumerate(_items(pa.get(_PREF), pp, "WeightedPodAffinityTerm")):
        wt = _obj(wt, f"{pp}[{i}]", "WeightedPodAffinityTerm")
        w = _int(wt.get("weight"), f"{pp}[{i}].weight", "WeightedPodAffinityTerm.weight")
        if not 0 < w <= 100:
            raise invalid(f"{pp}[{i}].weight", w, "must be in the range 1-100")
        _pod_affinity_term(wt.get("podAffinityTerm") or {}, f"{pp}[{i}].podAffinityTerm", labels)


def validate_affinity(affinity: Any, labels: Mapping[str, str], path: str = "spec.affinity") -> None:
    """``validateAffinity`` (required node affinity values must be label values)."""
    if affinity is None:
        return
    affinity = _obj(affinity, path, "Affinity")
    if affinity.get("nodeAffinity") is not None:
        _node_affinity(_obj(affinity["nodeAffinity"], f"{path}.nodeAffinity", "NodeAffinity"), f"{path}.nodeAffinity")
    for key in ("podAffinity", "podAntiAffinity"):
        if affinity.get(key) is not None:
            _pod_affinity(_obj(affinity[key], f"{path}.{key}", key), f"{path}.{key}", labels)


# -- tolerations -----------------------------------------------------------------------------
def _toleration(t: Any, path: str) -> None:
    t = _obj(t, path, "Toleration")
    key, op = t.get("key") or "", t.get("operator") or ""
    value, effect = t.get("value") or "", t.get("effect") or ""
    if key:
        validate_label_name(key, f"{path}.key")
    if not key and op != "Exists":
        raise invalid(f"{path}.operator", GoJSON(op),
                      'operator must be Exists when `key` is empty, which means "match all values and all keys"')
    if t.get("tolerationSeconds") is not None and effect != "NoExecute":
        raise invalid(f"{path}.effect", GoJSON(effect), "effect must be 'NoExecute' when `tolerationSeconds` is set")
    if op in ("Equal", ""):
        if not label_value_ok(value):
            raise invalid(f"{path}.operator", value, ";".join(is_valid_label_value(value)))
    elif op == "Exists":
        if value:
            raise invalid(f"{path}.operator", value, "value must be empty when `operator` is 'Exists'")
    elif op in ("Lt", "Gt"):
        # accepted as an API server with TaintTolerationComparisonOperators accepts them; the
        # scheduler's gate decides whether they tolerate anything
        if decimal_int64(value) is None:
            raise invalid(f"{path}.value", value, "must be a valid decimal integer in canonical form")
    else:
        raise not_supported(f"{path}.operator", GoJSON(op), ("Equal", "Exists"))
    if effect and effect not in TAINT_EFFECTS:
        raise not_supported(f"{path}.effect", GoJSON(effect), TAINT_EFFECTS)


def validate_tolerations(tolerations: Any, path: str = "spec.tolerations") -> None:
    """``ValidateTolerations``."""
    for i, t in enumerate(_items(tolerations, path, "PodSpec.spec.tolerations")):
        _toleration(t, f"{path}[{i}]")


# -- topology spread constraints ------------------------------------------------------------
def _spread_constraint(c: Mapping[str, Any], path: str, rest: list[Any], labels: Mapping[str, str]) -> None:
    skew = _int(c.get("maxSkew"), f"{path}.maxSkew", "TopologySpreadConstraint.maxSkew")
    if skew <= 0:
        raise invalid(f"{path}.maxSkew", skew, "must be greater than zero")
    tk, wu = c.get("topologyKey") or "", c.get("whenUnsatisfiable") or ""
    if not tk:
        raise required(f"{path}.topologyKey", "can not be empty")
    if wu not in ("DoNotSchedule", "ScheduleAnyway"):
        raise not_supported(f"{path}.whenUnsatisfiable", GoJSON(wu), ("DoNotSchedule", "ScheduleAnyway"))
    for other in rest:
        if isinstance(other, Mapping) and (other.get("topologyKey") or "") == tk and \
                (other.get("whenUnsatisfiable") or "") == wu:
            raise duplicate(f"{path}.{{topologyKey, whenUnsatisfiable}}", f"{{{tk}, {wu}}}")
    md = c.get("minDomains")
    if md is not None:
        md = _int(md, f"{path}.minDomains", "TopologySpreadConstraint.minDomains")
        if md <= 0:
            raise invalid(f"{path}.minDomains", md, "must be greater than zero")
        if wu != "DoNotSchedule":
            raise invalid(f"{path}.minDomains", md,
                          f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {wu}")
    for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        policy = c.get(key)
        if policy is not None and policy not in ("Honor", "Ignore"):
            raise not_supported(f"{path}.{key}", GoJSON(policy), ("Honor", "Ignore"))
    sel = c.get("labelSelector")
    check_label_keys(path, string_list(c.get("matchLabelKeys"), f"{path}.matchLabelKeys", "matchLabelKeys"),
                     [], sel, labels)
    validate_label_selector(sel, f"{path}.labelSelector")


def validate_spread_constraints(constraints: Any, labels: Mapping[str, str],
                                path: str = "spec.topologySpreadConstraints") -> None:
    """``validateTopologySpreadConstraints`` (MatchLabelKeysInPodTopologySpreadSelectorMerge on)."""
    items = _items(constraints, path, "PodSpec.spec.topologySpreadConstraints")
    for i, c in enumerate(items):
        _spread_constraint(_obj(c, f"{path}[{i}]", "TopologySpreadConstraint"), f"{path}[{i}]", items[i + 1:],
                           labels)
