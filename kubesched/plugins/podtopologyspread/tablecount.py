"""PodTopologySpread's counting over NodeTable columns (the fast path of PreFilter and
PreScore): node inclusion policies as boolean masks and per-domain sums of matching pods
with ``np.bincount`` over the per-node counts that ``MatchCounter.counts_array`` keeps.

The per-node loops in ``filtering.compute_state`` / ``scoring.compute_state`` remain the
reference; these functions give identical results, including the order in which domains
first appear (node order), which fixes the critical paths' tie-breaking.
"""

from __future__ import annotations

import logging

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.nodetable import NodeTable
from kubesched.plugins.podtopologyspread.args import HONOR
from kubesched.plugins.podtopologyspread.common import (
    MAX_INT32, Constraint, MatchCounter, has_required_affinity, required_affinity_matches,
    taints_untolerated,
)

log = logging.getLogger(__name__)


class Inclusion:
    """``matchNodeInclusionPolicies`` for one pod over all rows, masks built lazily."""

    __slots__ = ("pod", "table", "base", "check_affinity", "_affinity", "_taints")

    def __init__(self, pod: Pod, table: NodeTable, base: np.ndarray) -> None:
        self.pod, self.table, self.base = pod, table, base
        self.check_affinity = has_required_affinity(pod)
        self._affinity: np.ndarray | None = None
        self._taints: np.ndarray | None = None

    def affinity(self) -> np.ndarray:
        if self._affinity is None:
            ok = self.base.copy()
            for k, v in self.pod.node_selector.items():
                codes, ids, _ = self.table.label(k)
                code = ids.get(v)
                ok &= (codes == code) if code is not None else False
            aff = self.pod.affinity
            if aff is not None and aff.node_required is not None:
                infos = self.table.infos
                for j in np.flatnonzero(ok).tolist():
                    node = infos[j].node
                    ok[j] = node is not None and required_affinity_matches(self.pod, node)
            self._affinity = ok
        return self._affinity

    def taints(self) -> np.ndarray:
        if self._taints is None:
            ids, sets = self.table.taints()
            per_set = np.fromiter((not taints_untolerated(self.pod, ts) for ts in sets),
                                  dtype=bool, count=len(sets))
            self._taints = per_set[ids]
        return self._taints

    def admitted(self, c: Constraint) -> np.ndarray:
        """Rows of ``base`` that constraint ``c`` counts."""
        mask = self.base
        if c.node_affinity_policy == HONOR and self.check_affinity:
            mask = mask & self.affinity()
        if c.node_taints_policy == HONOR:
            mask = mask & self.taints()
        return mask


def has_all_keys(table: NodeTable, constraints: tuple[Constraint, ...]) -> np.ndarray:
    ok = np.ones(table.size, dtype=bool)
    for c in constraints:
        ok &= table.label(c.topology_key)[0] >= 0
    return ok


def ordered_domains(codes: np.ndarray, size: int) -> np.ndarray:
    """The distinct codes (all in ``[0, size)``) in order of first appearance."""
    if codes.size == 0:
        return codes
    present = np.flatnonzero(np.bincount(codes, minlength=size))
    if present.size <= 32:  # few domains (zones): find each one's first row
        first = np.fromiter((int(np.argmax(codes == d)) for d in present.tolist()),
                            dtype=np.intp, count=present.size)
        return present[np.argsort(first, kind="stable")]
    uniq, first = np.unique(codes, return_index=True)
    return uniq[np.argsort(first, kind="stable")]


def domain_sums(codes: np.ndarray, counts: np.ndarray, size: int) -> np.ndarray:
    """Per code the sum of ``counts`` (exact integers)."""
    if codes.size == 0:
        return np.zeros(size, dtype=np.int64)
    return np.bincount(codes, weights=counts, minlength=size).astype(np.int64)


class DomainCounts:
    """One hard constraint's PreFilter counts over a NodeTable: ``sums`` indexed by the
    label's codes (0 for domains without admitted nodes; at least one slot), ``sub`` the
    codes of the admitted rows in row order (fixes the order domains first appear), and
    the number of distinct domains among them."""

    __slots__ = ("sums", "sub", "values", "ndomains")

    def __init__(self, sums: np.ndarray, sub: np.ndarray, values: list[str], ndomains: int) -> None:
        self.sums, self.sub, self.values, self.ndomains = sums, sub, values, ndomains

    def as_dict(self) -> dict[str, int]:
        """Domain -> count, in the order the domains first appear."""
        order = ordered_domains(self.sub, len(self.values))
        values = self.values
        return dict(zip([values[k] for k in order.tolist()], self.sums[order].tolist()))

    def critical_paths(self) -> tuple[str, int, str, int]:
        """``critical_paths_of(self.as_dict())`` without building the dict: the first two
        domains by (count, first appearance)."""
        sub = self.sub
        if sub.size == 0:
            return "", MAX_INT32, "", MAX_INT32
        at_rows = self.sums[sub]
        n0 = int(at_rows.min())
        c0 = int(sub[int(np.argmax(at_rows == n0))])
        others = sub != c0
        if not others.any():
            return self.values[c0], n0, "", MAX_INT32
        n1 = int(at_rows[others].min())
        c1 = int(sub[int(np.argmax(others & (at_rows == n1)))])
        return self.values[c0], n0, self.values[c1], n1


def prefilter_domain_counts(pod: Pod, constraints: tuple[Constraint, ...], table: NodeTable,
                            counter: MatchCounter) -> list[DomainCounts]:
    """Per constraint, the matching pods per domain of the admitted nodes (arrays over
    the label's codes)."""
    inclusion = Inclusion(pod, table, has_all_keys(table, constraints))
    out: list[DomainCounts] = []
    for c in constraints:
        codes, _, values = table.label(c.topology_key)
        nvals = len(values)
        mask = inclusion.admitted(c)
        sub = codes[mask]
        matches = counter.counts_array(table, pod.namespace, c.selector)[mask]
        sums = domain_sums(sub, matches, max(nvals, 1))
        present = np.zeros(max(nvals, 1), dtype=bool)
        present[sub] = True
        out.append(DomainCounts(sums, sub, values, int(np.count_nonzero(present))))
    return out


def prefilter_counts(pod: Pod, constraints: tuple[Constraint, ...], table: NodeTable,
                     counter: MatchCounter) -> list[dict[str, int]]:
    """Per constraint, the matching pods per domain of the admitted nodes, in the order
    the domains first appear."""
    return [d.as_dict() for d in prefilter_domain_counts(pod, constraints, table, counter)]


def critical_paths_of(counts: dict[str, int]) -> tuple[str, int, str, int]:
    """The critical paths after updating with each (distinct) domain in order: the first
    two of a stable sort by count."""
    if not counts:
        return "", MAX_INT32, "", MAX_INT32
    names = list(counts)
    nums = np.fromiter(counts.values(), dtype=np.int64, count=len(names))
    order = np.argsort(nums, kind="stable")[:2].tolist()
    v0, n0 = names[order[0]], int(nums[order[0]])
    if len(order) < 2:
        return v0, n0, "", MAX_INT32
    return v0, n0, names[order[1]], int(nums[order[1]])


def prescore_counts(pod: Pod, constraints: tuple[Constraint, ...], table: NodeTable,
                    filtered_rows: np.ndarray, require_all: bool,
                    counter: MatchCounter) -> tuple[np.ndarray, list[dict[str, int]], list[int]]:
    """PreScore's counting: (rows of ``filtered_rows`` ignored, per constraint the counts
    per domain of the filtered nodes, per constraint the number of those domains).
    A node lacking a key falls in domain "" (as does a node whose value is "")."""
    base = has_all_keys(table, constraints) if require_all else np.ones(table.size, dtype=bool)
    ignored = filtered_rows[~base[filtered_rows]] if require_all else filtered_rows[:0]
    kept = filtered_rows[base[filtered_rows]] if require_all else filtered_rows
    inclusion = Inclusion(pod, table, base)
    counts: list[dict[str, int]] = []
    sizes: list[int] = []
    for c in constraints:
        if c.is_hostname:
            counts.append({})
            sizes.append(0)
            continue
        codes, ids, values = table.label(c.topology_key)
        empty = ids.get("")
        nvals = len(values)
        if empty is None:
            empty = nvals
            nvals += 1
        codes = np.where(codes < 0, empty, codes)
        names = list(values) + ([""] if nvals > len(values) else [])
        present = np.zeros(nvals, dtype=bool)
        present[codes[kept]] = True
        mask = inclusion.admitted(c)
        mask = mask & present[codes]
        sub = codes[mask]
        sums = domain_sums(sub, counter.counts_array(table, pod.namespace, c.selector)[mask], nvals)
        dom = np.flatnonzero(present)
        counts.append(dict(zip([names[k] for k in dom.tolist()], sums[dom].tolist())))
        sizes.append(int(dom.size))
    return ignored, counts, sizes
