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
from typing import Any, NamedTuple


class FieldError(NamedTuple):
    """One ``field.Error``: where, and what (``Invalid value: "x": why``)."""

    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME = re.compile(_QNAME_FMT)
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
              "end with an alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character")
_DNS1123_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                "'-' or '.', and must start and end with an alphanumeric character")
_INT64 = re.compile(r"[+-]?[0-9]+")

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery ``IsQualifiedName``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [f"a qualified name {_regex_error(_QNAME_MSG, _QNAME_FMT, 'MyName', 'my.name', '123-abc')}"
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > 253:
                errs.append("prefix part " + _max_len(253))
            if not _DNS1123_SUBDOMAIN.fullmatch(prefix):
                errs.append("prefix part " + _regex_error(_DNS1123_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + _max_len(63))
    if not _QNAME.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """apimachinery ``IsValidLabelValue``."""
    errs: list[str] = []
    if len(value.encode()) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


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
