"""What a scheduling cycle tells whoever records it (``explain``): the hooks the cycle calls,
once per step and never per node, when an observer is given.

Without an observer the cycle runs exactly upstream's algorithm and calls nothing here. With
one, the cycle also computes what upstream skips, so that an explanation is complete: the
verdicts of the nodes the nominated-node fast path does not visit, and the scores of the
nodes when upstream selects the only (or the nominated) node without scoring. What the cycle
decides is the same either way; what upstream did not look at is marked as such.
:class:`kubesched.explanation.recorder.AttemptRecorder` is the implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from kubesched.framework.interface import PostFilterResult
from kubesched.scheduler.results import NodeToStatus


class CycleObserver(Protocol):
    def not_visited(self, nodes: Sequence[str], found: int, processed: int, total: int,
                    by_score: bool) -> None:
        """Filtering stopped after ``found`` feasible nodes with ``processed`` of ``total``
        visited (``by_score``: ``percentageOfNodesToScore``; else no Score plugins, the
        first feasible node was enough); ``nodes`` were not visited."""

    def nominated_fast_path(self, node: str) -> None:
        """The nominated node passed every Filter: upstream looked at no other node."""

    def filtered(self, nodes: Sequence[str], verdicts: NodeToStatus) -> None:
        """Filtering is over (or was aborted by an error): the rejected nodes' statuses
        among ``nodes`` (every node, in snapshot order)."""

    def score_skipped_upstream(self, nominated: bool) -> None:
        """Upstream selects the nominated node (or the one feasible node) without scoring;
        the scores that follow are for the explanation."""

    def plugin_scores(self, nodes: Sequence[str], detail: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      weights: Mapping[str, int]) -> None:
        """Each Score plugin's raw and normalised scores over ``nodes``."""

    def scored(self, nodes: Sequence[str], weighted: Mapping[str, np.ndarray], totals: np.ndarray,
               table_names: Sequence[str], best_rows: np.ndarray) -> None:
        """The weighted scores (extenders' included) and totals over ``nodes``; the top
        NodeTable rows ``best_rows`` (names in ``table_names``)."""

    def post_filtered(self, result: PostFilterResult | None) -> None:
        """PostFilter ran (a nomination, its victims and the plugin's explanation, if any)."""
