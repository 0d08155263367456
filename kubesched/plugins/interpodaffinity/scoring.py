"""InterPodAffinity PreScore / Score / NormalizeScore (upstream ``interpodaffinity/scoring.go``).

PreScore sums weights per topology pair, ``{key: {value: score}}``, from every existing pod:

- +weight / -weight for each preferred affinity / anti-affinity term of the incoming pod
  the existing pod matches;
- +hardPodAffinityWeight for each *required* affinity term of the existing pod the
  incoming pod matches (when the weight is > 0);
- +weight / -weight for each preferred affinity / anti-affinity term of the existing pod
  the incoming pod matches;

each on the domain of the existing pod's node for the term's topology key. A node's score
is the sum of the values of its own labels; NormalizeScore maps [min, max] to [0, 100] in
float64 (all 0 when min == max). The batch form gathers the same sums by label code.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import numpy as np

from kubesched.api.objects import Pod, PodAffinityTerm
from kubesched.framework.cycle_state import StateKey
from kubesched.framework.interface import MAX_NODE_SCORE, ClusterObjects
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity.common import (
    PREF, REQ, IncomingTerm, existing_term_matches, namespace_labels,
)

log = logging.getLogger(__name__)

PRE_SCORE_STATE_KEY_NAME = "PreScoreInterPodAffinity"
PRE_SCORE_STATE_KEY: "StateKey[PreScoreState]" = StateKey(PRE_SCORE_STATE_KEY_NAME)

ScoreMap = dict[str, dict[str, int]]


class PreScoreState:
    """``topology_score[key][value]``; never mutated after PreScore, so clone() is itself.

    The NodeTable fast path (``tablescore``) gives instead, per key, totals indexed by the
    label codes of ``table``; the dict form is then derived on first use (per-node Score).
    """

    __slots__ = ("_scores", "table", "totals")

    def __init__(self, topology_score: ScoreMap | None = None, table: NodeTable | None = None,
                 totals: dict[str, np.ndarray] | None = None) -> None:
        self._scores = topology_score
        self.table = table
        self.totals = totals

    @property
    def topology_score(self) -> ScoreMap:
        if self._scores is None:
            self._scores = {}
            if self.totals is not None and self.table is not None:
                self._scores = _totals_to_map(self.totals, self.table)
        return self._scores

    @property
    def empty(self) -> bool:
        if self.totals is not None:
            return not self.totals
        return not self.topology_score

    def clone(self) -> "PreScoreState":
        return self


def _totals_to_map(totals: dict[str, np.ndarray], table: NodeTable) -> ScoreMap:
    """``{key: {value: score}}`` from per-code totals (zero values left out: Score reads a
    missing value as 0)."""
    out: ScoreMap = {}
    for key, tot in totals.items():
        values = table.label(key)[2]
        out[key] = {values[c]: int(tot[c]) for c in np.flatnonzero(tot[:-1]).tolist()}
    return out


def has_preferred_constraints(pod: Pod) -> bool:
    aff = pod.affinity
    return aff is not None and bool(aff.pod_affinity_preferred or aff.anti_affinity_preferred)


class _Accumulator:
    """Builds the score map for one incoming pod (upstream ``processExistingPod``)."""

    def __init__(self, pod: Pod, objects: ClusterObjects, hard_weight: int) -> None:
        aff = pod.affinity
        self.pod = pod
        self.ns_labels = namespace_labels(objects, pod.namespace)
        self.hard_weight = hard_weight
        self.preferred = [IncomingTerm(w.term, objects, w.weight)
                          for w in (aff.pod_affinity_preferred if aff else ())]
        self.preferred_anti = [IncomingTerm(w.term, objects, w.weight)
                               for w in (aff.anti_affinity_preferred if aff else ())]
        self.scores: ScoreMap = {}
        self._matched: dict[int, bool] = {}  # existing term id -> matches the incoming pod

    def signed_preferred(self) -> list[tuple[IncomingTerm, int]]:
        """The incoming pod's preferred terms with their signed weights (anti: negative)."""
        return [(it, it.weight) for it in self.preferred] + [(it, -it.weight) for it in self.preferred_anti]

    def existing_delta(self, kind: int, weight: int) -> int | None:
        """The signed weight of an existing pod's term of ``kind`` (common.existing_scoring_terms);
        None: it does not score (a required term when hardPodAffinityWeight is 0)."""
        if kind == REQ:
            return self.hard_weight if self.hard_weight > 0 else None
        return weight if kind == PREF else -weight

    def existing_matches(self, term_id: int, term: PodAffinityTerm) -> bool:
        """Whether the existing term ``term`` (cached under ``term_id``) selects the incoming pod."""
        ok = self._matched.get(term_id)
        if ok is None:
            ok = self._matched[term_id] = existing_term_matches(term, self.pod, self.ns_labels)
        return ok

    def _add(self, labels: Mapping[str, str], key: str, delta: int) -> None:
        tv = labels.get(key)
        if tv is not None:
            m = self.scores.setdefault(key, {})
            m[tv] = m.get(tv, 0) + delta

    def _existing(self, term: PodAffinityTerm, labels: Mapping[str, str], delta: int) -> None:
        if existing_term_matches(term, self.pod, self.ns_labels):
            self._add(labels, term.topology_key, delta)

    def process(self, existing: Pod, labels: Mapping[str, str]) -> None:
        for it, delta in self.signed_preferred():
            if it.matches(existing):
                self._add(labels, it.topology_key, delta)
        aff = existing.affinity
        if aff is None:
            return
        if self.hard_weight > 0:
            for t in aff.pod_affinity_required:
                self._existing(t, labels, self.hard_weight)
        for w in aff.pod_affinity_preferred:
            self._existing(w.term, labels, w.weight)
        for w in aff.anti_affinity_preferred:
            self._existing(w.term, labels, -w.weight)


def build_scores(pod: Pod, nodes: Iterable[NodeInfo], all_pods: bool, objects: ClusterObjects,
                 hard_weight: int) -> ScoreMap:
    """The score map over ``nodes``: every pod when ``all_pods``, else pods with affinity."""
    acc = _Accumulator(pod, objects, hard_weight)
    for ni in nodes:
        node = ni.node
        if node is None or not node.labels:
            continue
        labels = node.labels
        for existing in (ni.pods if all_pods else ni.pods_with_affinity):
            acc.process(existing, labels)
    log.debug("pod %s: %d topology keys scored", pod.key, len(acc.scores))
    return acc.scores


def score_node(s: PreScoreState, labels: Mapping[str, str]) -> int:
    score = 0
    for key, values in s.topology_score.items():
        tv = labels.get(key)
        if tv is not None:
            score += values.get(tv, 0)
    return score


def score_rows(s: PreScoreState, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    out = np.zeros(idx.size, np.int64)
    totals = s.totals
    if totals is not None and s.table is table and all(
            tot.size == len(table.label(key)[2]) + 1 for key, tot in totals.items()):
        for key, tot in totals.items():
            out += tot[table.label(key)[0][idx]]  # code -1 (label absent) reads the trailing 0
        return out
    for key, values in s.topology_score.items():
        codes, ids, names = table.label(key)
        per = np.zeros(len(names) + 1, np.int64)  # trailing 0 for code -1 (label absent)
        for v, sc in values.items():
            code = ids.get(v)
            if code is not None:
                per[code] = sc
        out += per[codes[idx]]
    return out


def normalize(scores: np.ndarray) -> None:
    """Upstream NormalizeScore, in place: 100 * (s - min) / (max - min), truncated."""
    if scores.size == 0:
        return
    lo = int(scores.min())
    hi = int(scores.max())
    diff = hi - lo
    if diff > 0:
        f = float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / np.float64(diff))
        scores[:] = f.astype(np.int64)
    else:
        scores[:] = 0
