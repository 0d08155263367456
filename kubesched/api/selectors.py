"""Label selectors and node selector terms, with upstream's matching and validation.

Mirrors apimachinery ``labels.Selector`` (metav1.LabelSelector: matchLabels and
matchExpressions with In/NotIn/Exists/DoesNotExist) and component-helpers
``nodeaffinity`` (NodeSelectorTerms: matchExpressions also with Gt/Lt, matchFields on
``metadata.name``). Selectors are parsed and validated once, when an object is decoded,
so the per-node hot path only does dictionary look-ups.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import SelectorError

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")


_INT_RE = re.compile(r"[+-]?[0-9]+")


def parse_go_int64(s: str) -> int | None:
    """Go's ``strconv.ParseInt(s, 10, 64)``: no spaces, no underscores, int64 range."""
    if not _INT_RE.fullmatch(s):
        return None
    n = int(s)
    return n if -(2**63) <= n < 2**63 else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` requirement (labels.Requirement)."""

    key: str
    operator: str
    values: frozenset[str]
    number: int | None = 0  # the parsed value of Gt / Lt; None: unparsable, never matches

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        v = labels.get(self.key)
        if v is None or self.number is None:
            return False
        n = parse_go_int64(v)
        if n is None:
            return False
        return n > self.number if op == "Gt" else n < self.number


def _requirement(expr: Any, path: str, operators: tuple[str, ...]) -> Requirement:
    if not isinstance(expr, Mapping):
        raise SelectorError("must be an object", field=path)
    key = expr.get("key")
    op = expr.get("operator")
    values = expr.get("values") or []
    if not isinstance(key, str) or not key:
        raise SelectorError("key is required", field=f"{path}.key")
    if op not in operators:
        supported = ", ".join(f'"{o}"' for o in operators)
        raise SelectorError(f'Unsupported value: "{op}": supported values: {supported}',
                            field=f"{path}.operator")
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorError("must be a list of strings", field=f"{path}.values")
    if op in ("In", "NotIn") and not values:
        raise SelectorError("for 'in', 'notin' operators, values set can't be empty",
                            field=f"{path}.values")
    if op in ("Exists", "DoesNotExist") and values:
        raise SelectorError("values set must be empty for exists and does not exist",
                            field=f"{path}.values")
    number: int | None = 0
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorError("for 'Gt', 'Lt' operators, exactly one value is required",
                                field=f"{path}.values")
        # The API server accepts any string here; upstream's lazy selector parsing makes a
        # requirement with a non-integer value match nothing.
        number = parse_go_int64(values[0])
    return Requirement(key, op, frozenset(values), number)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed metav1.LabelSelector. ``None`` selectors are represented by ``NOTHING``."""

    requirements: tuple[Requirement, ...]
    nothing: bool = False

    @classmethod
    def parse(cls, obj: Any, path: str = "") -> "LabelSelector":
        """Parse a selector object; ``None`` gives a selector that matches nothing."""
        if obj is None:
            return NOTHING
        if not isinstance(obj, Mapping):
            raise SelectorError("must be an object", field=path)
        reqs: list[Requirement] = []
        match_labels = obj.get("matchLabels") or {}
        if not isinstance(match_labels, Mapping):
            raise SelectorError("must be a map of strings", field=f"{path}.matchLabels")
        for k, v in match_labels.items():
            reqs.append(Requirement(str(k), "In", frozenset([str(v)])))
        exprs = obj.get("matchExpressions") or []
        if not isinstance(exprs, list):
            raise SelectorError("must be a list", field=f"{path}.matchExpressions")
        for i, expr in enumerate(exprs):
            reqs.append(_requirement(expr, f"{path}.matchExpressions[{i}]".lstrip("."),
                                     LABEL_OPERATORS))
        return cls(tuple(reqs))

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    @property
    def empty(self) -> bool:
        """True for ``{}``: matches everything."""
        return not self.nothing and not self.requirements


NOTHING = LabelSelector((), nothing=True)
EVERYTHING = LabelSelector(())


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One term of a NodeSelector: all expressions and all fields must match."""

    expressions: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]

    @classmethod
    def parse(cls, obj: Any, path: str) -> "NodeSelectorTerm":
        if not isinstance(obj, Mapping):
            raise SelectorError("must be an object", field=path)
        exprs = obj.get("matchExpressions") or []
        fields = obj.get("matchFields") or []
        e = tuple(_requirement(x, f"{path}.matchExpressions[{i}]", NODE_OPERATORS)
                  for i, x in enumerate(exprs))
        f = []
        for i, x in enumerate(fields):
            r = _requirement(x, f"{path}.matchFields[{i}]", FIELD_OPERATORS)
            if len(r.values) != 1:
                raise SelectorError("must have one element", field=f"{path}.matchFields[{i}].values")
            f.append(r)
        return cls(e, tuple(f))

    @property
    def empty(self) -> bool:
        return not self.expressions and not self.fields

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for r in self.expressions:
            if not r.matches(labels):
                return False
        if self.fields and node_name:
            fields = {"metadata.name": node_name}
            for r in self.fields:
                if not r.matches(fields):
                    return False
        return True


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A v1.NodeSelector: terms are ORed; empty terms are dropped (they match nothing)."""

    terms: tuple[NodeSelectorTerm, ...]

    @classmethod
    def parse(cls, obj: Any, path: str) -> "NodeSelector":
        if not isinstance(obj, Mapping):
            raise SelectorError("must be an object", field=path)
        raw = obj.get("nodeSelectorTerms") or []
        if not isinstance(raw, list):
            raise SelectorError("must be a list", field=f"{path}.nodeSelectorTerms")
        terms = [NodeSelectorTerm.parse(t, f"{path}.nodeSelectorTerms[{i}]")
                 for i, t in enumerate(raw)]
        return cls(tuple(t for t in terms if not t.empty))

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for t in self.terms:
            if t.matches(labels, node_name):
                return True
        return False


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    """A PreferredSchedulingTerm (weight 0 or an empty preference are dropped on parse)."""

    weight: int
    term: NodeSelectorTerm
