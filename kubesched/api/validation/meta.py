"""ObjectMeta, labels, annotations and label selectors, as apimachinery validates them.

``ValidateObjectMetaAccessor`` (name by the kind's rule, namespace a DNS-1123 label,
labels, annotations), metav1 ``ValidateLabels`` / ``ValidateLabelSelector``. Maps of
strings are also type-checked here: a YAML number or boolean where a string belongs is
a decoding error upstream (``json: cannot unmarshal number into Go struct field ...``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.validation.field import forbidden, invalid, required, too_long, type_error
from kubesched.api.validation.strings import (
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value, label_value_ok,
    mask_trailing_dash, qualified_name_ok,
)

__all__ = [
    "TOTAL_ANNOTATION_SIZE_LIMIT", "NameRule", "name_is_dns_label", "name_is_dns_subdomain",
    "name_is_path_segment", "string_map", "validate_annotations", "validate_label_name",
    "validate_label_selector", "validate_labels", "validate_object_meta",
]

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
NameRule = Callable[[str, bool], list[str]]


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain`` (pods, nodes, PriorityClasses, custom resources)."""
    return is_dns1123_subdomain(mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel`` (namespaces)."""
    return is_dns1123_label(mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """``path.ValidatePathSegmentName``: what every kind's name must be at least."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def string_map(obj: Any, path: str, go_field: str) -> dict[str, str]:
    """A map of strings as upstream decodes it (``null`` values are empty strings)."""
    if obj is None:
        return {}
    if type(obj) is dict and all(type(v) is str for v in obj.values()):
        return dict(obj)  # the common case: a copy, as the loop below makes
    if not isinstance(obj, Mapping):
        raise type_error(path, obj, go_field, "map[string]string")
    out: dict[str, str] = {}
    for k, v in obj.items():
        if isinstance(v, str):
            out[str(k)] = v
        elif v is None:
            out[str(k)] = ""
        else:
            raise type_error(path, v, go_field)
    return out


def validate_label_name(key: str, path: str) -> None:
    """``ValidateLabelName``: a qualified name."""
    if not qualified_name_ok(key):
        raise invalid(path, key, is_qualified_name(key)[0])


def validate_labels(labels: Mapping[str, str], path: str) -> None:
    """``ValidateLabels``: keys are qualified names, values label values."""
    for k, v in labels.items():
        if not qualified_name_ok(k):
            raise invalid(path, k, is_qualified_name(k)[0])
        if not label_value_ok(v):
            raise invalid(path, v, is_valid_label_value(v)[0])


def validate_annotations(annotations: Mapping[str, str], path: str) -> None:
    """``ValidateAnnotations``: keys are qualified names (any case); 256 KiB in all."""
    size = 0
    for k, v in annotations.items():
        if not qualified_name_ok(k):
            msgs = is_qualified_name(k.lower())
            if msgs:
                raise invalid(path, k, msgs[0])
        size += len(k) + len(v)
    if size > TOTAL_ANNOTATION_SIZE_LIMIT // 4:  # exact byte count only when it can matter
        size = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
        if size > TOTAL_ANNOTATION_SIZE_LIMIT:
            raise too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT)


def validate_object_meta(meta: Mapping[str, Any], labels: Mapping[str, str], annotations: Mapping[str, str],
                         name_rule: NameRule, *, namespaced: bool, path: str = "metadata") -> None:
    """``ValidateObjectMetaAccessor`` on create: generateName, name, namespace, labels,
    annotations (owner references, finalizers and managed fields are not checked)."""
    generate = meta.get("generateName")
    if isinstance(generate, str) and generate:
        msgs = name_rule(generate, True)
        if msgs:
            raise invalid(f"{path}.generateName", generate, msgs[0])
    name = meta.get("name")
    if not name:
        raise required(f"{path}.name", "name or generateName is required")
    if not isinstance(name, str):
        raise type_error(f"{path}.name", name, "ObjectMeta.metadata.name")
    msgs = name_rule(name, False)
    if msgs:
        raise invalid(f"{path}.name", name, msgs[0])
    if namespaced:
        ns = meta.get("namespace")
        if ns is not None and not isinstance(ns, str):
            raise type_error(f"{path}.namespace", ns, "ObjectMeta.metadata.namespace")
        if ns:  # unset: the namespace of the request (kubesched: "default")
            msgs = name_is_dns_label(ns, False)
            if msgs:
                raise invalid(f"{path}.namespace", ns, msgs[0])
    validate_labels(labels, f"{path}.labels")
    validate_annotations(annotations, f"{path}.annotations")


_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_selector(sel: Any, path: str, *, allow_invalid_values: bool = False) -> None:
    """metav1 ``ValidateLabelSelector`` (``None`` is valid: it selects nothing)."""
    if sel is None:
        return
    if type(sel) is not dict and not isinstance(sel, Mapping):
        raise type_error(path, sel, "LabelSelector", "v1.LabelSelector")
    match_labels = sel.get("matchLabels")
    if match_labels:
        if type(match_labels) is not dict or not all(type(v) is str for v in match_labels.values()):
            match_labels = string_map(match_labels, f"{path}.matchLabels", "LabelSelector.matchLabels")
        validate_labels(match_labels, f"{path}.matchLabels")
    exprs = sel.get("matchExpressions")
    if exprs is None:
        return
    if not isinstance(exprs, list):
        raise type_error(f"{path}.matchExpressions", exprs, "LabelSelector.matchExpressions",
                         "[]v1.LabelSelectorRequirement")
    for i, expr in enumerate(exprs):
        validate_selector_requirement(expr, f"{path}.matchExpressions[{i}]", allow_invalid_values)


def validate_selector_requirement(expr: Any, path: str, allow_invalid_values: bool) -> None:
    """metav1 ``ValidateLabelSelectorRequirement``."""
    if type(expr) is not dict and not isinstance(expr, Mapping):
        raise type_error(path, expr, "LabelSelector.matchExpressions", "v1.LabelSelectorRequirement")
    op = expr.get("operator") or ""
    key = expr.get("key") or ""
    values = string_list(expr.get("values"), f"{path}.values", "LabelSelectorRequirement.values")
    if not isinstance(op, str) or not isinstance(key, str):
        raise type_error(path, op if not isinstance(op, str) else key, "LabelSelectorRequirement")
    if op in ("In", "NotIn"):
        if not values:
            raise required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    else:
        raise invalid(f"{path}.operator", op, "not a valid selector operator")
    validate_label_name(key, f"{path}.key")
    if not allow_invalid_values:
        for j, v in enumerate(values):
            if not label_value_ok(v):
                raise invalid(f"{path}.values[{j}]", v, is_valid_label_value(v)[0])


def string_list(obj: Any, path: str, go_field: str) -> list[str]:
    """A list of strings as upstream decodes it (``null`` items are empty strings)."""
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise type_error(path, obj, go_field, "[]string")
    for v in obj:
        if type(v) is not str:
            break
    else:
        return obj
    for v in obj:
        if not isinstance(v, str) and v is not None:
            raise type_error(path, v, go_field)
    return ["" if v is None else v for v in obj]
