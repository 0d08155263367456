"""Incremental forms of InterPodAffinity's PreFilter counting and PreScore summing.

Same results as :func:`filtering.build_state` and :func:`scoring.build_scores` (which stay
the reference), but the pod-independent part of the work is cached per node in
:class:`NodeAggregate` s (recomputed only for nodes whose generation moved):

- for a label selector and topology key: ``(namespace, domain) -> matching pods``;
- for the required affinity terms (selectors, keys) together: ``(namespace, term index,
  domain) -> pods matching every selector``;
- the required anti-affinity terms of existing pods: ``(term, domain) -> occurrences``;
- the affinity terms of existing pods used by scoring: ``(kind, term, weight, domain)``.

Per cycle only the namespace admission and the existing terms' match against the incoming
pod are evaluated, once per distinct namespace / term. When the snapshot has a NodeTable,
PreScore uses :mod:`tablescore` (the same sums over NumPy columns) and ``build_scores``
here is only the fallback.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from kubesched.api.objects import Pod, PodAffinityTerm
from kubesched.framework.interface import ClusterObjects
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity.common import (
    IncomingTerm, existing_scoring_terms, existing_term_matches, incoming_terms, namespace_labels,
)
from kubesched.plugins.interpodaffinity.filtering import Counts, PreFilterState
from kubesched.plugins.interpodaffinity.nodecache import AggregateCache, Contribution
from kubesched.plugins.interpodaffinity.scoring import ScoreMap, _Accumulator
from kubesched.plugins.interpodaffinity.tablescore import RowCaches

log = logging.getLogger(__name__)



class Caches:
    """The plugin instance's aggregates (one per signature)."""

    def __init__(self) -> None:
        self.selector = AggregateCache()
        self.affinity = AggregateCache()
        self.existing_anti = AggregateCache(1)
        self.existing_score = AggregateCache(1)
        # Terms of existing pods, interned once per node refresh: hashing a term (a frozen
        # dataclass) is deep, so per-cycle loops work on small integer ids.
        self._term_ids: dict[PodAffinityTerm, int] = {}
        self.terms: list[PodAffinityTerm] = []
        self.rows = RowCaches(self.term_id, self.terms)

    def term_id(self, t: PodAffinityTerm) -> int:
        i = self._term_ids.get(t)
        if i is None:
            i = self._term_ids[t] = len(self.terms)
            self.terms.append(t)
        return i

    def existing_anti_contrib(self, ni: NodeInfo) -> Contribution:
        assert ni.node is not None
        labels = ni.node.labels
        out: Contribution = {}
        for ep in ni.pods_with_required_anti_affinity:
            assert ep.affinity is not None
            for t in ep.affinity.anti_affinity_required:
                tv = labels.get(t.topology_key)
                if tv is not None:
                    k = (self.term_id(t), tv)
                    out[k] = out.get(k, 0) + 1
        return out

    def existing_score_contrib(self, ni: NodeInfo) -> Contribution:
        assert ni.node is not None
        labels = ni.node.labels
        out: Contribution = {}
        for ep in ni.pods_with_affinity:
            for kind, t, weight in existing_scoring_terms(ep):
                tv = labels.get(t.topology_key)
                if tv is not None:
                    k = ((kind, self.term_id(t), weight), tv)
                    out[k] = out.get(k, 0) + 1
        return out


def _selector_contrib(selector: Any, key: str) -> Any:
    def contrib(ni: NodeInfo) -> Contribution:
        assert ni.node is not None
        tv = ni.node.labels.get(key)
        out: Contribution = {}
        if tv is None:
            return out
        for p in ni.pods:
            if selector.matches(p.labels):
                k = (p.namespace, tv)
                out[k] = out.get(k, 0) + 1
        return out
    return contrib


def _affinity_contrib(selectors: tuple[Any, ...], keys: tuple[str, ...]) -> Any:
    def contrib(ni: NodeInfo) -> Contribution:
        assert ni.node is not None
        labels = ni.node.labels
        tvs = [labels.get(k) for k in keys]
        out: Contribution = {}
        for p in ni.pods:
            pl = p.labels
            if all(s.matches(pl) for s in selectors):
                for i, tv in enumerate(tvs):
                    if tv is not None:
                        k = (p.namespace, (i, tv))
                        out[k] = out.get(k, 0) + 1
        return out
    return contrib


def _term_counts(caches: Caches, it: IncomingTerm, nodes: Sequence[NodeInfo],
                 table: Any) -> dict[str, int]:
    """Domain (of ``it.topology_key``) -> pods matching ``it``."""
    key = it.topology_key
    agg = caches.selector.get((it.selector, key), _selector_contrib(it.selector, key))
    out: dict[str, int] = {}
    for ns, sub in agg.sync(nodes, table).items():
        if it.admits(ns):
            if not out:
                out = dict(sub)
            else:
                for tv, c in sub.items():
                    out[tv] = out.get(tv, 0) + c
    return out


def build_state(caches: Caches, pod: Pod, nodes: Sequence[NodeInfo], table: Any,
                objects: ClusterObjects) -> PreFilterState:
    aff = pod.affinity
    s = PreFilterState(pod, incoming_terms(aff.pod_affinity_required if aff else (), objects),
                       incoming_terms(aff.anti_affinity_required if aff else (), objects),
                       namespace_labels(objects, pod.namespace))
    existing: list[tuple[str, dict[str, int]]] = []
    ns_labels = s.namespace_labels
    agg = caches.existing_anti.get(None, caches.existing_anti_contrib)
    for tid, sub in agg.sync(nodes, table).items():
        t = caches.terms[tid]
        if existing_term_matches(t, pod, ns_labels):
            existing.append((t.topology_key, dict(sub)))  # the aggregate changes later
    if s.affinity_terms:
        _affinity_counts(caches, s, nodes, table)
    anti = [(it.topology_key, _term_counts(caches, it, nodes, table)) for it in s.anti_affinity_terms]
    s.set_sources(existing, anti)
    return s


def _affinity_counts(caches: Caches, s: PreFilterState, nodes: Sequence[NodeInfo], table: Any) -> None:
    terms = s.affinity_terms
    sels = tuple(it.selector for it in terms)
    keys = tuple(it.topology_key for it in terms)
    agg = caches.affinity.get((sels, keys), _affinity_contrib(sels, keys))
    out: Counts = s.affinity_counts
    for ns, sub in agg.sync(nodes, table).items():
        if all(it.admits(ns) for it in terms):
            for (i, tv), c in sub.items():
                pair = (keys[i], tv)
                out[pair] = out.get(pair, 0) + c


def build_scores(caches: Caches, pod: Pod, nodes: Sequence[NodeInfo], table: Any,
                 objects: ClusterObjects, hard_weight: int) -> ScoreMap:
    acc = _Accumulator(pod, objects, hard_weight)
    scores = acc.scores
    for it, delta in acc.signed_preferred():
        counts = _term_counts(caches, it, nodes, table)
        if counts:
            m = scores.setdefault(it.topology_key, {})
            for tv, c in counts.items():
                m[tv] = m.get(tv, 0) + delta * c
    agg = caches.existing_score.get(None, caches.existing_score_contrib)
    for (kind, tid, w), sub in agg.sync(nodes, table).items():
        weight = acc.existing_delta(kind, w)
        t = caches.terms[tid]
        if weight is not None and acc.existing_matches(tid, t):
            m = scores.setdefault(t.topology_key, {})
            for tv, c in sub.items():
                m[tv] = m.get(tv, 0) + weight * c
    return scores
