"""``labelSelector`` and ``fieldSelector`` query parameters: parsing and matching.

Label selectors use apimachinery's string syntax (``a=b``, ``a==b``, ``a!=b``,
``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``, ``a>1``, ``a<1``), parsed into the same
:class:`~kubesched.api.selectors.Requirement` values the scheduler matches with. Field
selectors (``a=b``, ``a==b``, ``a!=b``, comma-separated, ``\\`` escapes) are checked
against each resource's supported field labels, as kube-apiserver does: an unsupported
field is a 400, a missing field reads as "".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.selectors import Requirement, parse_go_int64
from kubesched.server.apiserver.errors import ApiError, bad_request
from kubesched.server.apiserver.registry.resources import Resource

Predicate = Callable[[Mapping[str, Any]], bool]

_KEY = r"[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET_RE = re.compile(rf"^({_KEY})\s+(in|notin)\s*\((.*)\)$")
_OP_RE = re.compile(rf"^({_KEY})\s*(==|=|!=|>|<)\s*({_VALUE})$")
_EXISTS_RE = re.compile(rf"^(!?)\s*({_KEY})$")
_VALUE_RE = re.compile(rf"^{_VALUE}$")


def _split_top(s: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_label_selector(s: str) -> tuple[Requirement, ...]:
    """Parse a label selector string; raises a 400 ApiError when it is malformed."""
    reqs: list[Requirement] = []
    if not s.strip():
        return ()
    for part in _split_top(s):
        p = part.strip()
        if not p:
            raise bad_request(f"unable to parse requirement: found '', expected: identifier in {s!r}")
        if m := _SET_RE.match(p):
            values = [v.strip() for v in m.group(3).split(",")]
            if not values or any(not _VALUE_RE.match(v) for v in values) or values == [""]:
                raise bad_request(f"unable to parse requirement: invalid values in {p!r}")
            op = "In" if m.group(2) == "in" else "NotIn"
            reqs.append(Requirement(m.group(1), op, frozenset(values)))
        elif m := _OP_RE.match(p):
            key, op, value = m.groups()
            if op in ("=", "=="):
                reqs.append(Requirement(key, "In", frozenset([value])))
            elif op == "!=":
                reqs.append(Requirement(key, "NotIn", frozenset([value])))
            else:
                n = parse_go_int64(value)
                if n is None:
                    raise bad_request(f"unable to parse requirement: for 'Gt', 'Lt' operators, the "
                                      f"value must be an integer: {value!r}")
                reqs.append(Requirement(key, "Gt" if op == ">" else "Lt", frozenset([value]), n))
        elif m := _EXISTS_RE.match(p):
            reqs.append(Requirement(m.group(2), "DoesNotExist" if m.group(1) else "Exists", frozenset()))
        else:
            raise bad_request(f"unable to parse requirement: {p!r} is not a valid label selector term")
    return tuple(reqs)


@dataclass(frozen=True, slots=True)
class FieldTerm:
    field: str
    equal: bool
    value: str


def _unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append(s[i + 1])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _split_escaped(s: str, sep: str) -> list[str]:
    parts, cur, i = [], [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            cur.append(s[i:i + 2])
            i += 2
            continue
        if s[i] == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(s[i])
        i += 1
    parts.append("".join(cur))
    return parts


def _field_terms(s: str) -> tuple[FieldTerm, ...]:
    """The terms of a field selector, not yet checked against a resource's field labels."""
    terms: list[FieldTerm] = []
    if not s.strip():
        return ()
    for part in _split_escaped(s, ","):
        p = part.strip()
        for op in ("!=", "==", "="):
            idx = p.find(op)
            if idx > 0:
                key, value = p[:idx].strip(), _unescape(p[idx + len(op):])
                break
        else:
            raise bad_request(f"invalid selector: '{s}'; can't understand '{p}'")
        terms.append(FieldTerm(key, op != "!=", value))
    return tuple(terms)


def parse_field_selector(s: str, resource: Resource) -> tuple[FieldTerm, ...]:
    terms = _field_terms(s)
    for t in terms:
        if t.field not in resource.field_labels:
            raise bad_request(f'"{t.field}" is not a known field selector: only "'
                              + '", "'.join(resource.field_labels) + '"')
    return terms


def exact_match(s: str, field: str) -> str | None:
    """The value ``s`` requires ``field`` to equal (upstream ``Selector.RequiresExactMatch``:
    the first ``field=value`` term), split as :func:`parse_field_selector` splits it; None
    when it requires none or does not parse (the request then fails with a 400 anyway)."""
    try:
        terms = _field_terms(s)
    except ApiError:
        return None
    return next((t.value for t in terms if t.field == field and t.equal), None)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string value of a field label (``spec.nodeName``): "" when absent."""
    if path in ("source", "deprecatedSource"):
        src = obj.get(path) or {}
        return str(src.get("component") or "") if isinstance(src, Mapping) else ""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if isinstance(cur, list):
        return ",".join(str(x.get("ip", x)) if isinstance(x, Mapping) else str(x) for x in cur)
    return str(cur)


def predicate(resource: Resource, label_selector: str = "", field_selector: str = "") -> Predicate | None:
    """A predicate for both selectors, or ``None`` when neither is given."""
    reqs = parse_label_selector(label_selector or "")
    terms = parse_field_selector(field_selector or "", resource)
    if not reqs and not terms:
        return None

    def match(obj: Mapping[str, Any]) -> bool:
        if reqs:
            meta = obj.get("metadata") or {}
            labels = meta.get("labels") or {}
            for r in reqs:
                if not r.matches(labels):
                    return False
        for t in terms:
            if (field_value(obj, t.field) == t.value) != t.equal:
                return False
        return True

    return match


__all__ = ["ApiError", "FieldTerm", "Predicate", "exact_match", "field_value", "parse_field_selector",
           "parse_label_selector", "predicate"]
