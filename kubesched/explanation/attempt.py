"""What one scheduling attempt saw, recorded for ``explain`` (CLI, ``/debug/explain``, the UI).

Kept apart from the scheduling cycle so that the recording rules are in one place and stay
cheap: the cycle hands its :mod:`~kubesched.explanation.recorder` the arrays it already has;
the per-node dictionaries of raw and normalised scores are built only when a document is
asked for.

Per node, an attempt says ``ok`` (passed every Filter), the first failing plugin with its code
and reasons, or ``not evaluated`` with the reason, as upstream ``schedule_one.go`` leaves nodes
unvisited: ``percentageOfNodesToScore`` stopped the search once enough feasible nodes were
found (``numFeasibleNodesToFind``), or a profile without Score plugins stopped at the first
feasible node. Two fast paths are explained in full but marked: when the nominated node passes
(``evaluateNominatedNode``) upstream looks at no other node, and with one feasible node (or the
nominated one) it skips scoring; the other nodes' verdicts and the scores are still computed,
as the fidelity corpora (``tests/fidelity*/UPSTREAM_README.md``) require of a complete
explanation, and ``evaluation.upstreamEvaluatedOnly`` / ``scoreSkipped`` say what upstream skipped.

For preemption, the candidates the dry run found, their victims, and which of upstream's
ordered criteria (``pickOneNodeForPreemption``) chose the nominated node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.runtime.outcome import RowNames
from kubesched.framework.status import Status
from kubesched.plugins.preemption.evaluator import PreemptionExplanation
from kubesched.plugins.preemption.ordering import Candidate, StartTimes, score_functions

NOT_EVALUATED = "not evaluated"
REASON_SAMPLING = ("percentageOfNodesToScore: the search stopped after {found} feasible node(s) "
                   "(numFeasibleNodesToFind) with {processed} of {total} node(s) visited")
REASON_NO_SCORE = ("the profile has no Score plugins: the search stopped at the first feasible node "
                   "({processed} of {total} node(s) visited)")
REASON_NOMINATED = ("nominated node fast path: the nominated node {node} passed every Filter, so upstream "
                    "evaluated no other node; their verdicts are computed for this explanation only")
SKIP_SINGLE = "only one feasible node: upstream selects it without scoring; the scores are for this explanation"
SKIP_NOMINATED = ("nominated node fast path: upstream selects the nominated node without scoring; "
                  "the scores are for this explanation")

# upstream pickOneNodeForPreemption's criteria, in order (preemption/preemption.go)
CRITERIA = ("fewest PDB violations", "lowest highest-priority victim", "smallest sum of victim priorities",
            "fewest victims", "latest start time of the highest-priority victims")
ONLY_CANDIDATE = "only candidate"
TIE_RANDOM = "tied on every criterion: picked at random (seeded), as upstream's map order"
TIE_NAME = "tied on every criterion: picked the lowest node name (--tie-break name)"


@dataclass(slots=True)
class ScoreDetail:
    """Per-plugin score arrays over ``nodes``: raw from Score, after NormalizeScore, the
    weights, the weighted scores (extenders' included) and the totals. Kept as arrays, so
    recording costs the cycle nothing per node; documents build the per-node maps."""

    nodes: Sequence[str]  # a list, or the rows' names built on first read (framework.outcome.RowNames)
    raw: dict[str, np.ndarray]
    normalized: dict[str, np.ndarray]
    weights: dict[str, int]
    weighted: dict[str, np.ndarray] = field(default_factory=dict)
    totals: np.ndarray | None = None

    def per_node(self, arrays: Mapping[str, np.ndarray]) -> dict[str, dict[str, int]]:
        cols = {p: a.tolist() for p, a in arrays.items()}
        return {n: {p: c[j] for p, c in cols.items()} for j, n in enumerate(self.nodes)}


@dataclass
class Attempt:
    """One scheduling attempt of one pod, as ``explain`` shows it."""

    time: float = 0.0
    chosen: str | None = None
    message: str | None = None
    nominated_node: str | None = None
    victims: list[str] = field(default_factory=list)
    result: str = "Unschedulable"  # Scheduled | Unschedulable | Error | Waiting | Binding
    victim_pods: list[Pod] = field(default_factory=list)
    nomination_cleared: bool = False
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)  # rejected with Pending (upstream Diagnosis)
    extender_seconds: dict[str, float] = field(default_factory=dict)
    profile: str = ""
    pod_attempts: int = 0  # the pod's attempts so far, this one included (metrics)
    initial_attempt: float | None = None  # when the pod was first tried (metrics)
    evaluation: dict[str, Any] | None = None  # nodes, evaluated, notEvaluated, reason
    score_skipped: str | None = None
    score_detail: ScoreDetail | None = None
    preemption: dict[str, Any] | None = None
    _scores: dict[str, dict[str, int]] | None = field(default=None, repr=False)
    _totals: dict[str, int] | None = field(default=None, repr=False)
    _filter: dict[str, Any] | None = field(default=None, repr=False)
    _best: list[str] | None = field(default=None, repr=False)
    _best_rows: tuple[Sequence[str], np.ndarray] | None = field(default=None, repr=False)
    _filter_inputs: _FilterInputs | None = field(default=None, repr=False)

    @property
    def filter(self) -> dict[str, Any]:
        """Per node: ``ok``, the rejecting status as JSON, or ``not evaluated``, in node
        order. Built from what :func:`record_filter` kept on first read (most recorded
        attempts are never read), then kept."""
        out = self._filter
        if out is None:  # two readers (HTTP threads) may both build it: the same map
            src = self._filter_inputs
            out = self._filter = src.build() if src is not None else {}
        return out

    @filter.setter
    def filter(self, value: dict[str, Any]) -> None:
        self._filter, self._filter_inputs = value, None

    @property
    def best(self) -> list[str]:
        """The top-scoring nodes, sorted by name (built from the rows :meth:`record_best`
        kept on first read, then kept)."""
        out = self._best
        if out is None:
            src = self._best_rows
            out = self._best = sorted(src[0][i] for i in src[1].tolist()) if src is not None else []
        return out

    @best.setter
    def best(self, value: list[str]) -> None:
        self._best, self._best_rows = value, None

    def record_best(self, names: Sequence[str], rows: np.ndarray) -> None:
        """``best`` is the names of NodeTable ``rows`` (a table's names never change):
        a pod's ties can be hundreds of nodes, sorted only if someone reads them."""
        self._best, self._best_rows = None, (names, rows)


    @property
    def scores(self) -> dict[str, dict[str, int]]:
        """Per evaluated feasible node, each plugin's weighted score (built from the arrays
        each time it is read, unless set)."""
        if self._scores is not None:
            return self._scores
        d = self.score_detail
        return d.per_node(d.weighted) if d is not None and d.totals is not None else {}

    @scores.setter
    def scores(self, value: dict[str, dict[str, int]]) -> None:
        self._scores = value

    @property
    def totals(self) -> dict[str, int]:
        if self._totals is not None:
            return self._totals
        d = self.score_detail
        return dict(zip(d.nodes, d.totals.tolist())) if d is not None and d.totals is not None else {}

    @totals.setter
    def totals(self, value: dict[str, int]) -> None:
        self._totals = value

    def to_json(self) -> dict[str, Any]:
        d = self.score_detail
        scores, totals = self.scores, self.totals
        doc: dict[str, Any] = {
            "time": self.time, "filter": self.filter, "scores": scores,
            "totals": totals, "best": self.best, "chosen": self.chosen,
            "message": self.message, "nominatedNode": self.nominated_node,
            "victims": self.victims, "result": self.result}
        if self.extender_seconds:
            doc["extenderSeconds"] = self.extender_seconds
        if self.profile:
            doc["profile"] = self.profile
        if self.evaluation is not None:
            doc["evaluation"] = self.evaluation
        if self.score_skipped:  # upstream chose without scoring; the scores are for the explanation
            doc["scoreSkipped"] = self.score_skipped
            doc["upstreamSkipsScoring"] = True
        if d is not None and d.raw:
            doc["rawScores"] = d.per_node(d.raw)
            doc["normalizedScores"] = d.per_node(d.normalized)
            doc["weights"] = dict(d.weights)
        if self.preemption is not None:
            doc["preemption"] = self.preemption
        return doc


@dataclass(slots=True)
class _FilterInputs:
    """What one attempt's filter verdicts are built from. ``names`` is the NodeTable's list,
    which is never changed once built (a new table is made when nodes change); the others
    are copies, so later cycles cannot change what the attempt shows."""

    names: Sequence[str]
    statuses: dict[str, Status]
    absent: Status | None
    absent_names: tuple[str, ...]
    skipped: Sequence[str]

    def build(self) -> dict[str, Any]:
        out: dict[str, Any] = dict.fromkeys(self.names, "ok")  # in node order; the others overwritten below
        if self.skipped:
            out.update(dict.fromkeys(self.skipped, NOT_EVALUATED))
        statuses = self.statuses
        if self.absent is not None and self.absent_names:
            absent_json = self.absent.to_json()
            out.update((n, absent_json) for n in self.absent_names if n not in statuses)
        out.update((n, st.to_json()) for n, st in statuses.items() if n in out)
        return out


def record_filter(att: Attempt, statuses: Mapping[str, Status], absent: Status | None,
                  absent_names: Sequence[str], names: Sequence[str],
                  not_evaluated: Sequence[str] = (), reason: str | None = None,
                  fast_path_node: str | None = None) -> None:
    """Per node: the rejecting status, ``ok``, or ``not evaluated`` (``reason`` says why).
    ``fast_path_node``: the nominated node passed, so upstream looked at no other node; the
    other verdicts are still given (computed for the explanation, as the fidelity corpora
    expect) and ``evaluation`` says upstream evaluated that node only.

    The per-node map (a thousand entries at a thousand nodes) is built only when
    :attr:`Attempt.filter` is read: the live scheduler records every attempt, and few
    are ever asked for."""
    # a RowNames holds distinct rows (the unvisited part of the filter's visiting order):
    # kept as it is, its names built only if the verdicts are read
    skipped = not_evaluated if isinstance(not_evaluated, RowNames) else tuple(dict.fromkeys(not_evaluated))
    att._filter = None
    att._filter_inputs = _FilterInputs(names, dict(statuses), absent, tuple(absent_names), skipped)
    if fast_path_node is not None:
        att.evaluation = {"nodes": len(names), "evaluated": 1, "notEvaluated": len(names) - 1,
                          "upstreamEvaluatedOnly": fast_path_node, "reason": reason}
        return
    att.evaluation = {"nodes": len(names), "evaluated": len(names) - len(skipped),
                      "notEvaluated": len(skipped), "reason": reason if skipped else None}


def decide_preemption(candidates: Sequence[Candidate], times: StartTimes,
                      by_name: bool) -> tuple[str, list[dict[str, Any]]]:
    """Which criterion of ``pickOneNodeForPreemption`` left a single node, and each
    candidate's value per criterion (lower is better for all but the start time)."""
    by_node = {c.name: c for c in candidates}
    funcs = score_functions(by_node, times)
    rows = []
    for c in candidates:
        hp = c.victims[0].priority if c.victims else None
        earliest = times.earliest_start_of_highest_priority(c.victims)
        rows.append({"node": c.name, "victims": [v.key for v in c.victims],
                     "pdbViolations": c.num_pdb_violations, "highestVictimPriority": hp,
                     "victimPrioritySum": sum(v.priority for v in c.victims), "numVictims": len(c.victims),
                     "earliestStartOfHighestPriorityVictims": None if earliest in (None, times.now_ns)
                     else earliest / 1e9})
    if len(by_node) <= 1:
        return ONLY_CANDIDATE, rows
    remaining = list(by_node)
    for name, f in zip(CRITERIA, funcs):
        scores = [f(n) for n in remaining]
        best = max(scores)
        remaining = [n for n, s in zip(remaining, scores) if s == best]
        if len(remaining) == 1:
            return name, rows
    return (TIE_NAME if by_name else TIE_RANDOM), rows


def explain_preemption(exp: PreemptionExplanation | None, nominated: str | None,
                       by_name: bool) -> dict[str, Any] | None:
    """The ``preemption`` section of an attempt: candidates, victims, the deciding criterion."""
    if exp is None:
        return None
    if not exp.candidates:
        return {"candidates": [], "chosen": None, "decidedBy": None}
    decided, rows = decide_preemption(exp.candidates, StartTimes(), by_name)
    return {"candidates": rows, "chosen": nominated or None, "decidedBy": decided,
            "tiedAfterAllCriteria": list(exp.tie_set) if len(exp.tie_set) > 1 else []}
