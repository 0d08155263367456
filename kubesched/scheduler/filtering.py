"""Finding the nodes a pod fits (upstream ``schedule_one.go``: ``findNodesThatFitPod``,
``evaluateNominatedNode``, ``findNodesThatPassFilters``, ``findNodesThatPassExtenders``).

PreFilter, then the nominated node alone (a pod that preempted goes back to its node), then
Filter over the nodes PreFilter left, from the rotating start index, stopping once
``numFeasibleNodesToFind`` nodes passed; then the extenders' filters on the survivors. The
result is the feasible NodeTable rows and the :class:`~kubesched.scheduler.results.Diagnosis`
of the rejected ones; a plugin's or an extender's error raises
:class:`~kubesched.scheduler.results.CycleError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extender, ExtenderError, run_extender_filters
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.outcome import RowNames
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.scheduler.fiterror import FilterAbort, num_feasible_nodes_to_find
from kubesched.scheduler.observer import CycleObserver
from kubesched.scheduler.results import CycleError, Diagnosis, NodeToStatus

_NONE = np.zeros(0, np.intp)


@dataclass(slots=True)
class Feasible:
    """What filtering found: the feasible rows (visiting order), the diagnosis of the
    others, the nominated node's row when the fast path took it, the fresh NodeInfos an
    extender returned (``nodeCacheCapable`` false: upstream scores those), and how many
    nodes were evaluated."""

    rows: np.ndarray
    diagnosis: Diagnosis
    nominated_row: int | None = None
    scored_infos: list[NodeInfo] | None = None
    evaluated: int = 0


class FindNodes:
    """The filtering half of the algorithm, a mixin of the scheduler."""

    snapshot: Snapshot
    next_start_node_index: int
    extenders: tuple[Extender, ...]

    def find_nodes_that_fit_pod(self, fw: Framework, state: CycleState, pod: Pod,
                                observer: CycleObserver | None, timings: dict[str, float]) -> Feasible:
        snap = self.snapshot
        table = snap.table
        diagnosis = Diagnosis()
        nts = diagnosis.node_to_status
        pre_res, st, with_nodes = fw.run_pre_filter(state, pod, snap.node_infos)
        if not st.success:
            if not st.rejected:
                raise CycleError(st.message)
            nts.statuses = {name: st for name in table.names}
            diagnosis.pre_filter_msg = st.message
            if observer is not None:
                observer.filtered(table.names, nts)
            return Feasible(_NONE, diagnosis)
        nnn = pod.nominated_node_name
        nominated_row = (self._evaluate_nominated_node(fw, state, pod, nnn, nts.statuses, timings)
                         if nnn and nnn in table.index else None)
        idx = table.all
        if pre_res is not None and pre_res.node_names is not None:
            keep = sorted(table.index[n] for n in pre_res.node_names if n in table.index)
            idx = np.array(keep, dtype=np.intp)
            in_idx = set(keep)
            nts.absent_names = [table.names[i] for i in range(snap.num_nodes()) if i not in in_idx]
            nts.absent_status = Status(Code.UnschedulableAndUnresolvable,
                                       (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]",))
            diagnosis.unschedulable_plugins |= with_nodes
        if nominated_row is not None and observer is None:  # upstream: no other node is looked at
            return Feasible(np.array([nominated_row], np.intp), diagnosis, nominated_row, evaluated=1)
        found = self._find_nodes_that_pass(fw, state, pod, idx, diagnosis, nominated_row, observer, timings)
        if observer is not None:
            observer.filtered(table.names, nts)
        return found

    def _find_nodes_that_pass(self, fw: Framework, state: CycleState, pod: Pod, idx: np.ndarray,
                              diagnosis: Diagnosis, nominated_row: int | None,
                              observer: CycleObserver | None, timings: dict[str, float]) -> Feasible:
        """Filter and the extenders' filters over ``idx``. With the nominated node's row
        (only with an observer) every node is filtered for the explanation, the nominated
        node stays the answer and the start index does not move."""
        table = self.snapshot.table
        nts = diagnosis.node_to_status
        try:
            feasible, lazy_statuses, processed = self._find_nodes_that_pass_filters(fw, state, pod, idx, observer)
        except (FilterAbort, CycleError) as exc:
            if isinstance(exc, FilterAbort) and observer is not None:
                nts.statuses = exc.statuses()
            if nominated_row is None:
                if isinstance(exc, FilterAbort) and observer is not None:
                    observer.filtered(table.names, nts)
                raise CycleError(str(exc)) from None
            # only the explanation looked beyond the nominated node: its error is not the cycle's
            assert observer is not None
            observer.nominated_fast_path(table.names[nominated_row])
            return Feasible(np.array([nominated_row], np.intp), diagnosis, nominated_row, evaluated=1)
        if observer is not None or feasible.size == 0 or self.extenders:
            nts.statuses = lazy_statuses()
        if nominated_row is not None:
            assert observer is not None
            observer.nominated_fast_path(table.names[nominated_row])
            return Feasible(feasible, diagnosis, nominated_row, evaluated=1)
        found = Feasible(feasible, diagnosis, evaluated=processed)
        if self.extenders and feasible.size:
            try:
                self._find_nodes_that_pass_extenders(pod, found, timings)
            except ExtenderError as exc:
                if observer is not None:
                    observer.filtered(table.names, nts)
                raise CycleError(str(exc)) from None
        # the next pod's search starts where this one stopped (upstream nextStartNodeIndex)
        self.next_start_node_index = (self.next_start_node_index + processed) % self.snapshot.num_nodes()
        return found

    def _evaluate_nominated_node(self, fw: Framework, state: CycleState, pod: Pod, node: str,
                                 statuses: dict[str, Status], timings: dict[str, float]) -> int | None:
        """Upstream ``evaluateNominatedNode``: the nominated node's row if it passes every
        Filter and every extender's filter."""
        table = self.snapshot.table
        row = np.array([table.index[node]], np.intp)
        if not fw.filter_nodes(state, pod, table, row).feasible.size:
            return None
        if self.extenders:
            try:
                kept = run_extender_filters(self.extenders, pod, [table.infos[int(row[0])]], statuses, timings)
            except ExtenderError as exc:
                raise CycleError(str(exc)) from None
            if not kept:
                return None
        return int(row[0])

    def _find_nodes_that_pass_filters(self, fw: Framework, state: CycleState, pod: Pod, idx: np.ndarray,
                                      observer: CycleObserver | None,
                                      ) -> tuple[np.ndarray, Callable[[], dict[str, Status]], int]:
        """Filter rows ``idx`` from the rotating start; returns (feasible rows in visiting
        order, a function giving the statuses of the rejected visited nodes — built only
        when a diagnosis is needed —, number of nodes processed). Raises
        :class:`FilterAbort` when a Filter plugin returns Error."""
        table = self.snapshot.table
        n = idx.size
        if n == 0:
            return idx, dict, 0
        pct = fw.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(100 if pct is None else pct, n)
        # upstream hasScoring / hasExtenderFilters: one feasible node is enough only when
        # nothing would compare several (no Score plugin, no prioritizing or filtering extender)
        by_score = fw.has_score_plugins or any(e.is_prioritizer or e.is_filter for e in self.extenders)
        if not by_score:
            to_find = 1
        start = self.next_start_node_index % n
        order = np.concatenate((idx[start:], idx[:start])) if start else idx
        out = fw.filter_nodes(state, pod, table, order)
        if out.error is not None:
            raise CycleError(out.error.message)
        feasible = out.feasible
        processed = n
        if feasible.size > to_find:
            last = feasible[to_find - 1]
            processed = int(np.nonzero(order == last)[0][0]) + 1
            feasible = feasible[:to_find]
            if observer is not None:  # the rows' names are built when the verdicts are read
                observer.not_visited(RowNames(table.names, order[processed:].copy()), to_find, processed, n,
                                     by_score)

        err = next((st for st in out.statuses.values() if st.code == Code.Error), None)
        if err is not None:  # upstream: a Filter error aborts the attempt (findNodesThatPassFilters)
            raise FilterAbort(f'running "{err.plugin}" filter plugin: {err.message}',
                              lambda: {table.names[i]: fw.status_of(state, pod, table, out, i)
                                       for i in out.failed_by})

        def statuses() -> dict[str, Status]:
            failed = out.failed_by
            if processed < n and failed:
                visited = set(order[:processed].tolist())
                failed = {i: p for i, p in failed.items() if i in visited}
            return {table.names[i]: fw.status_of(state, pod, table, out, i) for i in failed}

        return feasible, statuses, processed

    def _find_nodes_that_pass_extenders(self, pod: Pod, found: Feasible, timings: dict[str, float]) -> None:
        """Upstream ``findNodesThatPassExtenders``: the filter extenders in turn narrow
        ``found.rows``, each rejection joining the diagnosis. Raises :class:`ExtenderError`."""
        table = self.snapshot.table
        rows = found.rows
        statuses = found.diagnosis.node_to_status.statuses
        infos = run_extender_filters(self.extenders, pod, [table.infos[i] for i in rows.tolist()], statuses, timings)
        unknown = [ni.name for ni in infos if ni.name not in table.index]
        if unknown:
            raise ExtenderError(f"an extender returned node(s) not in the cluster: {', '.join(unknown)}")
        found.rows = np.array([table.index[ni.name] for ni in infos], np.intp)
        if any(ni is not table.infos[i] for ni, i in zip(infos, found.rows.tolist())):
            found.scored_infos = infos
