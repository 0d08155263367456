"""Recording one scheduling attempt for ``explain``: the observer the scheduling cycle calls
at each step (:class:`kubesched.scheduler.observer.CycleObserver`) when explanations are on.

It writes the explanation's parts of an :class:`~kubesched.explanation.attempt.Attempt` —
per-node filter verdicts, which nodes upstream did not evaluate and why, the score arrays,
the top nodes, the preemption candidates — from what each step hands over. The cycle writes
the outcome (result, message, chosen node, nomination, victims) itself, from its result
values; nothing here decides anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.explanation.attempt import (
    REASON_NO_SCORE, REASON_NOMINATED, REASON_SAMPLING, SKIP_NOMINATED, SKIP_SINGLE, Attempt, ScoreDetail,
    explain_preemption, record_filter,
)
from kubesched.framework.interface import PostFilterResult
from kubesched.plugins.preemption.evaluator import PreemptionExplanation

if TYPE_CHECKING:
    from kubesched.scheduler.results import NodeToStatus


class AttemptRecorder:
    """Fills ``att``'s explanation as the cycle goes (one recorder per attempt)."""

    __slots__ = ("att", "tie_break_by_name", "_skipped", "_reason", "_fast_path")

    def __init__(self, att: Attempt, tie_break_by_name: bool) -> None:
        self.att = att
        self.tie_break_by_name = tie_break_by_name
        self._skipped: Sequence[str] = ()
        self._reason: str | None = None
        self._fast_path: str | None = None

    def not_visited(self, nodes: Sequence[str], found: int, processed: int, total: int,
                    by_score: bool) -> None:
        why = REASON_SAMPLING if by_score else REASON_NO_SCORE
        self._skipped = nodes
        self._reason = why.format(found=found, processed=processed, total=total)

    def nominated_fast_path(self, node: str) -> None:
        self._fast_path = node
        self._reason = REASON_NOMINATED.format(node=node)

    def filtered(self, nodes: Sequence[str], verdicts: NodeToStatus) -> None:
        record_filter(self.att, verdicts.statuses, verdicts.absent_status, verdicts.absent_names, nodes,
                      self._skipped, self._reason, self._fast_path)

    def score_skipped_upstream(self, nominated: bool) -> None:
        self.att.score_skipped = SKIP_NOMINATED if nominated else SKIP_SINGLE

    def plugin_scores(self, nodes: Sequence[str], detail: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      weights: Mapping[str, int]) -> None:
        self.att.score_detail = ScoreDetail(nodes, {p: r for p, (r, _) in detail.items()},
                                            {p: v for p, (_, v) in detail.items()}, dict(weights))

    def scored(self, nodes: Sequence[str], weighted: Mapping[str, np.ndarray], totals: np.ndarray,
               table_names: Sequence[str], best_rows: np.ndarray) -> None:
        att = self.att
        if att.score_detail is None:
            att.score_detail = ScoreDetail(nodes, {}, {}, {})
        att.score_detail.weighted, att.score_detail.totals = dict(weighted), totals
        att.record_best(table_names, best_rows)

    def post_filtered(self, result: PostFilterResult | None) -> None:
        """The preemption section, from DefaultPreemption's explanation in its result."""
        if result is None:
            self.att.preemption = explain_preemption(None, None, self.tie_break_by_name)
            return
        exp = result.explanation if isinstance(result.explanation, PreemptionExplanation) else None
        self.att.preemption = explain_preemption(exp, result.nominated_node_name, self.tie_break_by_name)
