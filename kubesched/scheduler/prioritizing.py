"""Scoring the feasible nodes and choosing one (upstream ``schedule_one.go``:
``prioritizeNodes`` with the extenders' priorities, ``selectHost``).

PreScore, Score and NormalizeScore run over the feasible NodeTable rows (the batch form
where a plugin has one); the extenders' scaled priorities are added; the top rows go to
:meth:`Prioritize.select_host`. A plugin's error raises
:class:`~kubesched.scheduler.results.CycleError`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extender, run_extender_prioritize
from kubesched.framework.nodetable import NodeTable, RowInfos
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.outcome import RowNames
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo
from kubesched.scheduler.observer import CycleObserver
from kubesched.scheduler.results import CycleError


class Prioritize:
    """The scoring half of the algorithm, a mixin of the scheduler."""

    snapshot: Snapshot
    rng: random.Random
    tie_break_by_name: bool
    extenders: tuple[Extender, ...]

    def prioritize_nodes(self, fw: Framework, state: CycleState, pod: Pod, rows: np.ndarray,
                         observer: CycleObserver | None, timings: dict[str, float],
                         scored_infos: list[NodeInfo] | None = None, call_extenders: bool = True,
                         ) -> np.ndarray:
        """The top-scoring rows among ``rows``. ``scored_infos``: the NodeInfos an extender
        returned (nodeCacheCapable false, no pods): upstream scores those, not the snapshot's."""
        table = self.snapshot.table
        score_table, score_rows = table, rows
        if scored_infos is not None:
            score_table = NodeTable(scored_infos)
            score_rows = score_table.all
        # node names only for extenders (a list per pod costs the cycle at 1,000s of nodes);
        # an observer gets the rows, their names built if an explanation is read
        names: Sequence[str] = ([table.names[i] for i in rows.tolist()] if self.extenders
                                else RowNames(table.names, rows) if observer is not None else [])
        per_plugin: dict[str, np.ndarray] = {}
        if not fw.has_score_plugins:  # upstream: every node scores 1, or 0 plus the extenders'
            totals = np.zeros(rows.size, np.int64) if self.extenders else np.ones(rows.size, np.int64)
        else:
            infos = (score_table.infos if score_rows.size == score_table.size
                     else RowInfos(score_table, score_rows))
            st = fw.run_pre_score(state, pod, infos)
            if not st.success:
                raise CycleError(st.message)
            detail: dict[str, tuple[np.ndarray, np.ndarray]] | None = {} if observer is not None else None
            res = fw.run_score(state, pod, score_table, score_rows, detail)
            if isinstance(res, Status):
                raise CycleError(res.message)
            per_plugin, totals = res
            if observer is not None and detail is not None:
                observer.plugin_scores(names, detail, {p: fw.weights[p] for p in detail})
        if self.extenders and call_extenders:
            nodes = scored_infos or [table.infos[i] for i in rows.tolist()]
            per_plugin, totals = self._prioritize_with_extenders(pod, nodes, names, per_plugin, totals, timings)
        best_rows = fw.best_rows(rows, totals) if score_rows is rows else rows[totals == totals.max()]
        if observer is not None:  # arrays only: the per-node maps are built when a document is asked for
            observer.scored(names, per_plugin, totals, table.names, best_rows)
        return best_rows

    def _prioritize_with_extenders(self, pod: Pod, infos: Sequence[NodeInfo], names: Sequence[str],
                                   per_plugin: dict[str, np.ndarray], totals: np.ndarray,
                                   timings: dict[str, float]) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The extenders' part of upstream ``prioritizeNodes``: each prioritizer's scaled
        scores over ``names`` join the totals (and the per-plugin map, under its name)."""
        per_ext = run_extender_prioritize(self.extenders, pod, [ni.node for ni in infos if ni.node is not None],
                                          timings)
        if not per_ext:
            return per_plugin, totals
        totals = totals.copy()
        per_plugin = dict(per_plugin)
        for ext, scores in per_ext.items():
            col = np.array([scores.get(n, 0) for n in names], np.int64)
            per_plugin[ext] = per_plugin[ext] + col if ext in per_plugin else col
            totals += col
        return per_plugin, totals

    def select_host(self, best_rows: np.ndarray) -> str:
        """Among equal top scores (NodeTable rows): the lowest name, or a seeded uniform
        choice. Upstream picks each tied node with equal probability in every release: by
        reservoir sampling up to v1.34, by the largest of a random number drawn per node from
        v1.35 (schedule_one.go's Randomizer). Go's random stream cannot be reproduced, so
        one seeded uniform draw stands for both (the same distribution, at the cost of one
        draw instead of one per node)."""
        names: list[str] = self.snapshot.table.names
        if self.tie_break_by_name:
            return min(names[i] for i in best_rows.tolist())  # type: ignore[no-any-return]
        if best_rows.size == 1:
            return names[int(best_rows[0])]
        return names[int(best_rows[self.rng.randrange(int(best_rows.size))])]
