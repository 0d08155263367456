"""Parse errors of node selector terms, as upstream's ``nodeaffinity`` helpers find them.

Upstream parses a pod's node selector terms lazily: a term whose label key is not a
qualified name or whose values are not valid label values is *broken* and matches no
node (required terms), or makes PreScore fail (preferred terms). The API server accepts
some such terms (old pods, Gt/Lt values), and the scheduler's addedAffinity args are
validated the same way. This module reproduces those checks and upstream's messages
(``field.Invalid`` on apimachinery's ``IsQualifiedName`` / ``IsValidLabelValue``) on the
raw JSON terms, which keep the indices and value order the messages name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from kubesched.api.validation.strings import is_qualified_name, is_valid_label_value

if TYPE_CHECKING:
    from kubesched.api.objects import Node, Pod
    from kubesched.api.selectors import NodeSelectorTerm


class FieldError(NamedTuple):
    """One ``field.Error``: where, and what (``Invalid value: "x": why``)."""

    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


_INT64 = re.compile(r"[+-]?[0-9]+")

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")


qualified_name_errors = is_qualified_name
label_value_errors = is_valid_label_value


def _go_quote(v: Any) -> str:
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[]string{" + ", ".join(_go_quote(x) for x in v) + "}"
    return str(v)


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {_go_quote(value)}: {detail}")


def _is_int64(v: str) -> bool:
    return bool(_INT64.fullmatch(v)) and -(2**63) <= int(v) < 2**63


def _unsupported(path: str, op: Any, supported: tuple[str, ...]) -> FieldError:
    values = ", ".join(f'"{o}"' for o in supported)
    return FieldError(f"{path}.operator", f"Unsupported value: {_go_quote(op)}: supported values: {values}")


def _expression_errors(expr: Mapping[str, Any], path: str) -> list[FieldError]:
    """``labels.NewRequirement`` with a NodeSelectorRequirement's operator."""
    key = str(expr.get("key") or "")
    op = expr.get("operator")
    values = [str(v) for v in (expr.get("values") or [])]
    if op not in LABEL_OPERATORS:
        return [_unsupported(path, op, LABEL_OPERATORS)]
    errs: list[FieldError] = []
    msgs = qualified_name_errors(key)
    if msgs:
        errs.append(_invalid(f"{path}.key", key, "; ".join(msgs)))
    vpath = f"{path}.values"
    if op in ("In", "NotIn") and not values:
        errs.append(_invalid(vpath, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(_invalid(vpath, values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(_invalid(vpath, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            if not _is_int64(v):
                errs.append(_invalid(f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(values):
        msgs = label_value_errors(v)
        if msgs:
            errs.append(_invalid(f"{vpath}[{i}][{key}]", v, "; ".join(msgs)))
    return errs


def _field_errors(req: Mapping[str, Any], path: str) -> list[FieldError]:
    op = req.get("operator")
    values = [str(v) for v in (req.get("values") or [])]
    if op not in FIELD_OPERATORS:
        return [_unsupported(path, op, FIELD_OPERATORS)]
    if len(values) != 1:
        return [_invalid(f"{path}.values", values, "must have one element")]
    return []


def term_errors(term: Mapping[str, Any], path: str) -> list[FieldError]:
    """Every parse error of one raw NodeSelectorTerm (``path`` names the term)."""
    errs: list[FieldError] = []
    for i, e in enumerate(term.get("matchExpressions") or []):
        errs.extend(_expression_errors(e if isinstance(e, Mapping) else {}, f"{path}.matchExpressions[{i}]"))
    for i, f in enumerate(term.get("matchFields") or []):
        errs.extend(_field_errors(f if isinstance(f, Mapping) else {}, f"{path}.matchFields[{i}]"))
    return errs


def is_empty_term(term: Any) -> bool:
    """Upstream drops terms with neither matchExpressions nor matchFields (they match nothing)."""
    return not isinstance(term, Mapping) or (not term.get("matchExpressions") and not term.get("matchFields"))


def aggregate(errs: list[FieldError]) -> str:
    """``errors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` (duplicates once)."""
    seen: list[str] = []
    for e in map(str, errs):
        if e not in seen:
            seen.append(e)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


# -- a pod's required node affinity, per node (component-helpers ``nodeaffinity``) ---------
def raw_node_affinity(pod: "Pod") -> Mapping[str, Any]:
    """The pod's nodeAffinity as decoded JSON: upstream reads the unfiltered term lists
    (empty terms included) for the PreFilter result and parse errors."""
    affinity = (pod.raw.get("spec") or {}).get("affinity")
    na = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    return na if isinstance(na, Mapping) else {}


def raw_required_terms(pod: "Pod") -> list[Any]:
    req = raw_node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    return terms if isinstance(terms, list) else []


def required_terms(pod: "Pod") -> "tuple[tuple[NodeSelectorTerm, ...], bool] | None":
    """The pod's required node affinity terms that parse cleanly, and whether some were
    dropped as broken (a broken term matches no node); None when the pod has none."""
    required = pod.affinity.node_required if pod.affinity is not None else None
    if required is None:
        return None
    raw = [t for t in raw_required_terms(pod) if not is_empty_term(t)]
    broken = [bool(term_errors(t, "")) for t in raw]
    if len(broken) != len(required.terms):  # cannot happen for decoded pods
        broken = [False] * len(required.terms)
    kept = tuple(t for t, b in zip(required.terms, broken) if not b)
    return kept, len(kept) != len(required.terms)


def required_node_affinity_matches(pod: "Pod", node: "Node") -> bool:
    """``GetRequiredNodeAffinity(pod).Match(node)``: the nodeSelector and the required
    terms (ORed; broken terms never match). The DaemonSet controller decides with it."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    terms = required_terms(pod)
    if terms is None:
        return True
    return any(t.matches(labels, node.name) for t in terms[0])
