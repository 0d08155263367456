"""Node selector terms evaluated on one node (per-node form) or on NodeTable rows (batch form).

The batch form evaluates a label requirement on the dictionary-encoded label column:
In/NotIn look up the codes of the wanted values, Exists/DoesNotExist test for a code,
Gt/Lt parse each *distinct* label value once. ``metadata.name`` fields compare row
indices. Both forms use :meth:`Requirement.matches` semantics, so they always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Node
from kubesched.api.selectors import NodeSelectorTerm, Requirement
from kubesched.framework.nodetable import NodeTable

NAME_FIELD = "metadata.name"


def _expression_mask(r: Requirement, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    codes, ids, values = table.label(r.key)
    c: np.ndarray = codes[idx]
    op = r.operator
    if op in ("Exists", "DoesNotExist"):
        present: np.ndarray = c >= 0
        return present if op == "Exists" else ~present
    if op in ("In", "NotIn"):
        wanted = np.fromiter((ids[v] for v in r.values if v in ids), dtype=np.int32)
        hit = np.isin(c, wanted)
        return hit if op == "In" else ~hit
    # Gt / Lt: decide once per distinct value; the last slot is "label absent" (code -1).
    lut = np.fromiter((r.matches({r.key: v}) for v in values), dtype=bool, count=len(values))
    out: np.ndarray = np.append(lut, r.matches({}))[c]
    return out


def _field_mask(r: Requirement, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    if r.key != NAME_FIELD:
        # Only metadata.name is a node field: In never matches, NotIn always does.
        return np.full(idx.size, r.operator == "NotIn", dtype=bool)
    rows = [table.index[v] for v in r.values if v in table.index]
    hit = np.isin(idx, np.array(rows, dtype=idx.dtype))
    return hit if r.operator == "In" else ~hit


def term_mask(term: NodeSelectorTerm, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` that match every expression and field of ``term``."""
    mask = np.ones(idx.size, dtype=bool)
    for r in term.expressions:
        mask &= _expression_mask(r, table, idx)
    for r in term.fields:
        mask &= _field_mask(r, table, idx)
    return mask


@dataclass(frozen=True, slots=True)
class Terms:
    """ORed node selector terms; ``has_errors`` when some terms were dropped as broken."""

    terms: tuple[NodeSelectorTerm, ...]
    has_errors: bool = False

    def matches(self, node: Node) -> bool:
        labels, name = node.labels, node.name
        return any(t.matches(labels, name) for t in self.terms)

    def mask(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        out = np.zeros(idx.size, dtype=bool)
        for t in self.terms:
            out |= term_mask(t, table, idx)
        return out


@dataclass(frozen=True, slots=True)
class RequiredAffinity:
    """A pod's nodeSelector and required node affinity (``GetRequiredNodeAffinity``)."""

    node_selector: tuple[tuple[str, str], ...]
    affinity: Terms | None

    def matches(self, node: Node) -> bool:
        return self.match_with_error(node)[0]

    def match_with_error(self, node: Node) -> tuple[bool, bool]:
        """(matches, parse error reported): upstream reports the broken terms' errors only
        when the nodeSelector matched and no clean affinity term did."""
        labels = node.labels
        for k, v in self.node_selector:
            if labels.get(k) != v:
                return False, False
        if self.affinity is None:
            return True, False
        ok = self.affinity.matches(node)
        return ok, not ok and self.affinity.has_errors

    def mask(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        mask = np.ones(idx.size, dtype=bool)
        for k, v in self.node_selector:
            codes, ids, _ = table.label(k)
            code = ids.get(v)
            if code is None:
                return np.zeros(idx.size, dtype=bool)
            mask &= codes[idx] == code
        if self.affinity is not None:
            mask &= self.affinity.mask(table, idx)
        return mask


@dataclass(frozen=True, slots=True)
class PreferredTerms:
    """Weighted preferred terms: a node scores the sum of the weights of those it matches."""

    terms: tuple[tuple[int, NodeSelectorTerm], ...]

    def score(self, node: Node) -> int:
        labels, name = node.labels, node.name
        return sum(w for w, t in self.terms if t.matches(labels, name))

    def scores(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        out = np.zeros(idx.size, dtype=np.int64)
        for w, t in self.terms:
            out += term_mask(t, table, idx) * np.int64(w)
        return out


def selector_items(selector: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(selector.items())
