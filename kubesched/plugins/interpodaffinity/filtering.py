"""InterPodAffinity PreFilter / Filter (upstream ``interpodaffinity/filtering.go``).

PreFilter counts, per topology pair ``(key, value)``:

- ``existing_anti_affinity_counts``: existing pods whose required anti-affinity terms match
  the incoming pod (one per matching term, on the existing pod's node's domain);
- ``affinity_counts``: existing pods matching *all* the incoming pod's required affinity
  terms (one per term);
- ``anti_affinity_counts``: existing pods matching each required anti-affinity term of the
  incoming pod.

Filter then only looks the node's labels up in these maps. The batch form maps the same
counts onto NodeTable label codes (one small array per topology key, then a gather).
AddPod/RemovePod update the counts in place (preemption's "what if" states).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import StateKey
from kubesched.framework.interface import ClusterObjects
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import Status, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity.common import (
    IncomingTerm, TopologyPair, existing_term_matches, incoming_terms, matches_all, namespace_labels,
)

log = logging.getLogger(__name__)

PRE_FILTER_STATE_KEY_NAME = "PreFilterInterPodAffinity"
PRE_FILTER_STATE_KEY: "StateKey[PreFilterState]" = StateKey(PRE_FILTER_STATE_KEY_NAME)

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

REJECT_AFFINITY = unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
REJECT_ANTI_AFFINITY = unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
REJECT_EXISTING_ANTI_AFFINITY = unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)

Counts = dict[TopologyPair, int]


def _update(m: Counts, labels: Mapping[str, str], key: str, value: int) -> None:
    """Upstream ``topologyToMatchedTermCount.update``: drop the pair when it reaches 0."""
    tv = labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = m.get(pair, 0) + value
    if n == 0:
        m.pop(pair, None)
    else:
        m[pair] = n


class PreFilterState:
    """What Filter reads; ``clone()`` copies the three count maps (AddPod/RemovePod mutate)."""

    __slots__ = ("_existing", "affinity_counts", "_anti", "_existing_src", "_anti_src",
                 "pod", "affinity_terms", "anti_affinity_terms", "namespace_labels",
                 "pod_matches_own_affinity", "_existing_index")

    def __init__(self, pod: Pod, affinity_terms: list[IncomingTerm],
                 anti_affinity_terms: list[IncomingTerm], ns_labels: Mapping[str, str]) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = ns_labels
        self._existing: Counts | None = {}
        self.affinity_counts: Counts = {}
        self._anti: Counts | None = {}
        # Lazily summed sources (topology key, {value: count}) of the two maps above, set
        # by the counting code; the batch filter reads them without building the maps.
        self._existing_src: list[tuple[str, dict[str, int]]] = []
        self._anti_src: list[tuple[str, dict[str, int]]] = []
        # The "first pod of a group" exception needs this; the pod does not change.
        self.pod_matches_own_affinity = matches_all(affinity_terms, pod)
        self._existing_index: dict[str, frozenset[str]] | None = None

    def clone(self) -> "PreFilterState":
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.pod_matches_own_affinity = self.pod_matches_own_affinity
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        c._existing_index = self._existing_index
        c._existing_src, c._anti_src = [], []
        return c

    def set_sources(self, existing: list[tuple[str, dict[str, int]]],
                    anti: list[tuple[str, dict[str, int]]]) -> None:
        """Make the existing-anti-affinity and anti-affinity maps the (lazy) sums of these."""
        self._existing, self._existing_src = None, existing
        self._anti, self._anti_src = None, anti
        self._existing_index = None

    @staticmethod
    def _sum(src: list[tuple[str, dict[str, int]]]) -> Counts:
        out: Counts = {}
        for key, sub in src:
            if not out:
                out.update(zip(zip(repeat(key), sub), sub.values()))
            else:
                for tv, c in sub.items():
                    out[(key, tv)] = out.get((key, tv), 0) + c
        return out

    @property
    def existing_anti_affinity_counts(self) -> Counts:
        if self._existing is None:
            self._existing = self._sum(self._existing_src)
            self._existing_src = []
        return self._existing

    @existing_anti_affinity_counts.setter
    def existing_anti_affinity_counts(self, value: Counts) -> None:
        self._existing, self._existing_src = value, []

    @property
    def anti_affinity_counts(self) -> Counts:
        if self._anti is None:
            self._anti = self._sum(self._anti_src)
            self._anti_src = []
        return self._anti

    @anti_affinity_counts.setter
    def anti_affinity_counts(self, value: Counts) -> None:
        self._anti, self._anti_src = value, []

    def has_existing(self) -> bool:
        """``bool(existing_anti_affinity_counts)`` without building it (sources hold no zeros)."""
        if self._existing is None:
            return any(sub for _, sub in self._existing_src)
        return bool(self._existing)

    def has_anti(self) -> bool:
        if self._anti is None:
            return any(sub for _, sub in self._anti_src)
        return bool(self._anti)

    def update_with_pod(self, other: Pod, node: Node, multiplier: int) -> None:
        """Upstream ``preFilterState.updateWithPod``: account for ``other`` on ``node``."""
        labels = node.labels
        if other.affinity is not None:
            for t in other.affinity.anti_affinity_required:
                if existing_term_matches(t, self.pod, self.namespace_labels):
                    _update(self.existing_anti_affinity_counts, labels, t.topology_key, multiplier)
        if matches_all(self.affinity_terms, other):
            for it in self.affinity_terms:
                _update(self.affinity_counts, labels, it.topology_key, multiplier)
        for it in self.anti_affinity_terms:
            if it.matches(other):
                _update(self.anti_affinity_counts, labels, it.topology_key, multiplier)
        self._existing_index = None

    def existing_index(self) -> dict[str, frozenset[str]]:
        """Topology key -> values whose existing-anti-affinity count is positive."""
        idx = self._existing_index
        if idx is None:
            acc: dict[str, set[str]] = {}
            for (k, v), n in self.existing_anti_affinity_counts.items():
                if n > 0:
                    acc.setdefault(k, set()).add(v)
            idx = self._existing_index = {k: frozenset(vs) for k, vs in acc.items()}
        return idx


def build_state(pod: Pod, all_nodes: Sequence[NodeInfo], anti_nodes: Iterable[NodeInfo],
                objects: ClusterObjects) -> PreFilterState:
    """Upstream PreFilter's counting (``getExistingAntiAffinityCounts`` and
    ``getIncomingAffinityAntiAffinityCounts``)."""
    aff = pod.affinity
    s = PreFilterState(pod, incoming_terms(aff.pod_affinity_required if aff else (), objects),
                       incoming_terms(aff.anti_affinity_required if aff else (), objects),
                       namespace_labels(objects, pod.namespace))
    existing = s.existing_anti_affinity_counts
    ns_labels = s.namespace_labels
    for ni in anti_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.labels
        for ep in ni.pods_with_required_anti_affinity:
            assert ep.affinity is not None
            for t in ep.affinity.anti_affinity_required:
                if existing_term_matches(t, pod, ns_labels):
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        pair = (t.topology_key, tv)
                        existing[pair] = existing.get(pair, 0) + 1
    if s.affinity_terms or s.anti_affinity_terms:
        _count_incoming(s, all_nodes)
    log.debug("pod %s: existing anti-affinity pairs %d, affinity pairs %d, anti-affinity pairs %d",
              pod.key, len(existing), len(s.affinity_counts), len(s.anti_affinity_counts))
    return s


def _count_incoming(s: PreFilterState, all_nodes: Sequence[NodeInfo]) -> None:
    aff_terms, anti_terms = s.affinity_terms, s.anti_affinity_terms
    aff, anti = s.affinity_counts, s.anti_affinity_counts
    for ni in all_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.labels
        for ep in ni.pods:
            if aff_terms and matches_all(aff_terms, ep):
                for it in aff_terms:
                    tv = labels.get(it.topology_key)
                    if tv is not None:
                        aff[(it.topology_key, tv)] = aff.get((it.topology_key, tv), 0) + 1
            for it in anti_terms:
                if it.matches(ep):
                    tv = labels.get(it.topology_key)
                    if tv is not None:
                        anti[(it.topology_key, tv)] = anti.get((it.topology_key, tv), 0) + 1


def should_skip(s: PreFilterState) -> bool:
    return not s.has_existing() and not s.affinity_terms and not s.anti_affinity_terms


# -- per node ---------------------------------------------------------------------------
def satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    counts = s.affinity_counts
    for it in s.affinity_terms:
        tv = labels.get(it.topology_key)
        if tv is None:
            return False  # every topology label must exist on the node
        if counts.get((it.topology_key, tv), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: nothing matches anywhere yet.
    return not counts and s.pod_matches_own_affinity


def satisfy_pod_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if counts:
        for it in s.anti_affinity_terms:
            tv = labels.get(it.topology_key)
            if tv is not None and counts.get((it.topology_key, tv), 0) > 0:
                return False
    return True


def satisfy_existing_pods_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    if s.existing_anti_affinity_counts:
        for key, values in s.existing_index().items():
            if labels.get(key) in values:
                return False
    return True


def filter_node(s: PreFilterState, node: Node | None) -> Status | None:
    """The rejection for this node, or None when it passes."""
    labels = node.labels if node is not None else {}
    if not satisfy_pod_affinity(s, labels):
        return REJECT_AFFINITY
    if not satisfy_pod_anti_affinity(s, labels):
        return REJECT_ANTI_AFFINITY
    if not satisfy_existing_pods_anti_affinity(s, labels):
        return REJECT_EXISTING_ANTI_AFFINITY
    return None


# -- batch ------------------------------------------------------------------------------
def _codes(table: NodeTable, key: str, idx: np.ndarray) -> tuple[np.ndarray, dict[str, int], int]:
    """Label codes of rows ``idx`` (-1 = absent), value->code, and the number of codes."""
    codes, ids, values = table.label(key)
    return codes[idx], ids, len(values)


def _sources(counts: Counts) -> list[tuple[str, dict[str, int]]]:
    """``counts`` regrouped by topology key (the form :func:`_per_code` reads)."""
    by_key: dict[str, dict[str, int]] = {}
    for (key, v), cnt in counts.items():
        by_key.setdefault(key, {})[v] = cnt
    return list(by_key.items())


def _per_code(src: list[tuple[str, dict[str, int]]], key: str, ids: Mapping[str, int],
              n: int) -> np.ndarray:
    """Count per label code of the sum of ``src``'s maps for ``key``; slot ``n`` collects
    values no node has (then reset to 0) and the trailing 0 at ``n + 1`` is what code -1
    (label absent) picks up."""
    per = np.zeros(n + 2, np.int64)
    first = True
    for k, sub in src:
        if k != key or not sub:
            continue
        codes = np.fromiter(map(ids.get, sub, repeat(n)), np.intp, len(sub))
        cnts = np.fromiter(sub.values(), np.int64, len(sub))
        if first:
            per[codes] = cnts  # codes are distinct but for n, which is reset below
            first = False
        else:
            np.add.at(per, codes, cnts)
    per[n] = 0
    return per


def filter_mask(s: PreFilterState, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    """True where the node passes all three checks (same results as :func:`filter_node`)."""
    ok = np.ones(idx.size, bool)
    if s.affinity_terms:
        has_all = np.ones(idx.size, bool)
        exist = np.ones(idx.size, bool)
        aff_src = _sources(s.affinity_counts)
        for it in s.affinity_terms:
            c, ids, n = _codes(table, it.topology_key, idx)
            has_all &= c >= 0
            exist &= _per_code(aff_src, it.topology_key, ids, n)[c] > 0
        if not s.affinity_counts and s.pod_matches_own_affinity:
            ok &= has_all
        else:
            ok &= has_all & exist
    if s.has_anti():
        anti_src = _sources(s.anti_affinity_counts) if s._anti is not None else s._anti_src
        for it in s.anti_affinity_terms:
            c, ids, n = _codes(table, it.topology_key, idx)
            ok &= ~(_per_code(anti_src, it.topology_key, ids, n)[c] > 0)
    if s.has_existing():
        src = _sources(s.existing_anti_affinity_counts) if s._existing is not None else s._existing_src
        for key in sorted({k for k, _ in src}):
            c, ids, n = _codes(table, key, idx)
            per = _per_code(src, key, ids, n)  # [n]: values no node has; [n + 1]: label absent
            ok &= ~(per[c] > 0)
    return ok
