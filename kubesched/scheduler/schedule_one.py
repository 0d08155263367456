"""One scheduling cycle (upstream ``schedule_one.go``): ``schedulePod`` (PreFilter, Filter
with ``percentageOfNodesToScore`` and the rotating start index, the extenders' filters,
PreScore, Score, the extenders' priorities, select host), the FitError on no fit and
PostFilter (preemption), then the hand-over to the binding cycle. An :class:`Attempt`
(:mod:`kubesched.explanation.attempt`) records what the cycle saw, for ``explain``."""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.explanation.attempt import (
    REASON_NO_SCORE, REASON_NOMINATED, REASON_SAMPLING, SKIP_NOMINATED, SKIP_SINGLE, Attempt, ScoreDetail,
    explain_preemption, record_filter,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderError, run_extender_filters, run_extender_prioritize
from kubesched.framework.interface import PODS_TO_ACTIVATE, QueuedPodInfo
from kubesched.framework.nodetable import NodeTable, RowInfos
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.outcome import RowNames
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins.preemption.evaluator import EXPLANATION
from kubesched.scheduler.binding_cycle import BindingCycle
from kubesched.scheduler.fiterror import (
    NO_NODES_AVAILABLE, FilterAbort, fit_error_message, num_feasible_nodes_to_find,
)
from kubesched.scheduler.handle import AlgorithmObserver

log = logging.getLogger(__name__)


class SchedulingCycle(BindingCycle):
    """Finding a node for one pod; the state it reads besides the binding cycle's."""

    profiles: dict[str, Framework]
    snapshot: Snapshot
    rng: random.Random
    tie_break_by_name: bool
    explain: bool
    next_start_node_index: int
    algorithm_observer: AlgorithmObserver | None

    def schedule_one(self, qpi: QueuedPodInfo) -> Attempt:
        """Run one scheduling cycle (and, on success, the binding cycle) for ``qpi``."""
        pod = qpi.pod
        fw = self.profiles[pod.scheduler_name]
        self.cache.update_snapshot(self.snapshot)
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        att = Attempt(time=self.now(), profile=pod.scheduler_name, pod_attempts=qpi.attempts,
                      initial_attempt=qpi.initial_attempt_timestamp)
        observer = self.algorithm_observer
        if observer is None:
            chosen = self._schedule_pod(fw, state, pod, att)
        else:
            observer.before(state)
            started = time.perf_counter()
            chosen = self._schedule_pod(fw, state, pod, att)
            observer.after(time.perf_counter() - started)
        if chosen is None:
            if att.nominated_node:
                qpi.pod = self._apply_preemption(pod, att)
            elif att.nomination_cleared:
                qpi.pod = dataclasses.replace(pod, nominated_node_name="")
            qpi.unschedulable_plugins = set(att.unschedulable_plugins)
            self._report_failure(qpi.pod, att)
            self._requeue(qpi, error=att.result == "Error")
            return att
        self._assume_and_bind(fw, state, qpi, chosen, att)
        return att

    def _filter(self, fw: Framework, state: CycleState, pod: Pod, idx: np.ndarray, att: Attempt,
                ) -> tuple[np.ndarray, Callable[[], dict[str, Status]], int] | Status:
        """Filter rows ``idx`` from the rotating start; returns (feasible rows in visiting
        order, a function giving the statuses of the rejected visited nodes — built only
        when a diagnosis is needed —, number of nodes processed), or a plugin's Error.
        With explain, the rows upstream would not have visited are left in ``att.evaluation``."""
        table = self.snapshot.table
        n = idx.size
        if n == 0:
            return idx, dict, 0
        pct = fw.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(100 if pct is None else pct, n)
        if not fw.has_score_plugins:
            to_find = 1
        start = self.next_start_node_index % n
        order = np.concatenate((idx[start:], idx[:start])) if start else idx
        out = fw.filter_nodes(state, pod, table, order)
        if out.error is not None:
            return out.error
        feasible = out.feasible
        processed = n
        if feasible.size > to_find:
            last = feasible[to_find - 1]
            processed = int(np.nonzero(order == last)[0][0]) + 1
            feasible = feasible[:to_find]
            if self.explain:
                why = REASON_SAMPLING if fw.has_score_plugins else REASON_NO_SCORE
                # the rows' names are built when the attempt's verdicts are read
                att.evaluation = {"skipped": RowNames(table.names, order[processed:].copy()),
                                  "reason": why.format(found=to_find, processed=processed, total=n)}

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

    def _schedule_pod(self, fw: Framework, state: CycleState, pod: Pod, att: Attempt) -> str | None:
        snap = self.snapshot
        num_all = snap.num_nodes()
        if num_all == 0:
            att.result, att.message = "Error", NO_NODES_AVAILABLE
            return None
        table = snap.table
        pre_res, st, with_nodes = fw.run_pre_filter(state, pod, snap.node_infos)
        statuses: dict[str, Status] = {}
        absent: Status | None = None
        absent_names: list[str] = []
        pre_msg = ""
        feasible = np.zeros(0, np.intp)
        nominated_row: int | None = None
        scored_infos: list[NodeInfo] | None = None  # fresh NodeInfos an extender returned
        if not st.success:
            if not st.rejected:
                att.result, att.message = "Error", st.message
                return None
            statuses = {name: st for name in table.names}
            pre_msg = st.message
        else:
            nnn = pod.nominated_node_name
            if nnn and nnn in table.index:
                row = np.array([table.index[nnn]], np.intp)
                if fw.filter_nodes(state, pod, table, row).feasible.size:
                    nominated_row = int(row[0])
                    if self.extenders:
                        try:
                            kept = run_extender_filters(self.extenders, pod, [table.infos[nominated_row]],
                                                        statuses, att.extender_seconds)
                        except ExtenderError as exc:
                            att.result, att.message = "Error", str(exc)
                            return None
                        if not kept:
                            nominated_row = None
            idx = table.all
            if pre_res is not None and pre_res.node_names is not None:
                keep = sorted(table.index[n] for n in pre_res.node_names if n in table.index)
                idx = np.array(keep, dtype=np.intp)
                in_idx = set(keep)
                absent_names = [table.names[i] for i in range(num_all) if i not in in_idx]
                absent = Status(Code.UnschedulableAndUnresolvable,
                                (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]",))
                att.unschedulable_plugins |= with_nodes
            if nominated_row is not None and not self.explain:  # upstream evaluateNominatedNode
                feasible = np.array([nominated_row], np.intp)
            else:
                # with explain the other nodes' verdicts are computed too, for a complete
                # explanation (the fidelity corpora's contract), and marked as unseen upstream
                try:
                    filtered = self._filter(fw, state, pod, idx, att)
                except FilterAbort as exc:
                    if self.explain:
                        self._record_filter(att, exc.statuses(), absent, absent_names, table.names)
                    att.result, att.message = "Error", str(exc)
                    return None
                if isinstance(filtered, Status):
                    att.result, att.message = "Error", filtered.message
                    return None
                feasible, lazy_statuses, processed = filtered
                if self.explain or feasible.size == 0 or self.extenders:
                    statuses = lazy_statuses()
                if self.extenders and feasible.size and nominated_row is None:
                    try:
                        infos = run_extender_filters(self.extenders, pod, [table.infos[i] for i in feasible.tolist()],
                                                     statuses, att.extender_seconds)
                        unknown = [ni.name for ni in infos if ni.name not in table.index]
                        if unknown:
                            raise ExtenderError(f"an extender returned node(s) not in the cluster: {', '.join(unknown)}")
                    except ExtenderError as exc:
                        if self.explain:
                            self._record_filter(att, statuses, absent, absent_names, table.names)
                        att.result, att.message = "Error", str(exc)
                        return None
                    feasible = np.array([table.index[ni.name] for ni in infos], np.intp)
                    if any(ni is not table.infos[i] for ni, i in zip(infos, feasible.tolist())):
                        scored_infos = infos
                if nominated_row is None:
                    self.next_start_node_index = (self.next_start_node_index + processed) % num_all
                else:
                    att.evaluation = {**(att.evaluation or {}), "fastPathNode": nnn,
                                      "reason": REASON_NOMINATED.format(node=nnn)}
        if self.explain:
            self._record_filter(att, statuses, absent, absent_names, table.names)
        if feasible.size == 0:
            self._fit_error(fw, state, pod, att, statuses, absent, absent_names, pre_msg, num_all)
            return None
        fixed: str | None = None  # upstream selects it without scoring
        if nominated_row is not None:
            fixed = table.names[nominated_row]
        elif feasible.size == 1:
            fixed = table.names[int(feasible[0])]
        if fixed is not None:
            att.chosen = fixed
            if not self.explain:
                return fixed
            # explain scores the feasible nodes anyway (a complete explanation) and says so
            att.score_skipped = SKIP_NOMINATED if nominated_row is not None else SKIP_SINGLE
        chosen = self._prioritize(fw, state, pod, feasible, att, scored_infos, fixed is None)
        if chosen is None:
            return None
        att.chosen = fixed or chosen
        return att.chosen

    def _record_filter(self, att: Attempt, statuses: Mapping[str, Status], absent: Status | None,
                       absent_names: Sequence[str], names: Sequence[str]) -> None:
        ev = att.evaluation or {}
        record_filter(att, statuses, absent, absent_names, names, ev.get("skipped", ()), ev.get("reason"),
                      ev.get("fastPathNode"))

    def _prioritize(self, fw: Framework, state: CycleState, pod: Pod, rows: np.ndarray,
                    att: Attempt, scored_infos: list[NodeInfo] | None = None,
                    call_extenders: bool = True) -> str | None:
        """``scored_infos``: the NodeInfos an extender returned (nodeCacheCapable false,
        no pods): upstream scores those, not the snapshot's."""
        table = self.snapshot.table
        score_table, score_rows = table, rows
        if scored_infos is not None:
            score_table = NodeTable(scored_infos)
            score_rows = score_table.all
        # node names only for extenders (a list per pod costs the cycle at 1,000s of nodes);
        # explain keeps the rows and builds the names when a document is asked for
        names: Sequence[str] = ([table.names[i] for i in rows.tolist()] if self.extenders
                                else RowNames(table.names, rows) if self.explain else [])
        if not fw.has_score_plugins and not self.extenders:
            totals = np.ones(rows.size, np.int64)
            per_plugin: dict[str, np.ndarray] = {}
        elif not fw.has_score_plugins:
            totals = np.zeros(rows.size, np.int64)
            per_plugin = {}
        else:
            infos = (score_table.infos if score_rows.size == score_table.size
                     else RowInfos(score_table, score_rows))
            st = fw.run_pre_score(state, pod, infos)
            if not st.success:
                att.result, att.message = "Error", st.message
                return None
            detail: dict[str, tuple[np.ndarray, np.ndarray]] | None = {} if self.explain else None
            res = fw.run_score(state, pod, score_table, score_rows, detail)
            if isinstance(res, Status):
                att.result, att.message = "Error", res.message
                return None
            per_plugin, totals = res
            if detail is not None:
                att.score_detail = ScoreDetail(names, {p: r for p, (r, _) in detail.items()},
                                               {p: v for p, (_, v) in detail.items()},
                                               {p: fw.weights[p] for p in detail})
        if self.extenders and call_extenders:
            nodes = [ni.node for ni in (scored_infos or [table.infos[i] for i in rows.tolist()])
                     if ni.node is not None]
            per_ext = run_extender_prioritize(self.extenders, pod, nodes, att.extender_seconds)
            if per_ext:
                totals = totals.copy()
                per_plugin = dict(per_plugin)
                for ext, scores in per_ext.items():
                    col = np.array([scores.get(n, 0) for n in names], np.int64)
                    per_plugin[ext] = per_plugin[ext] + col if ext in per_plugin else col
                    totals += col
        best_rows = fw.best_rows(rows, totals) if score_rows is rows else rows[totals == totals.max()]
        if self.explain:  # arrays only: the per-node maps are built when a document is asked for
            if att.score_detail is None:
                att.score_detail = ScoreDetail(names, {}, {}, {})
            att.score_detail.weighted, att.score_detail.totals = per_plugin, totals
            att.record_best(table.names, best_rows)
        return self.select_host(best_rows)

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


    def _fit_error(self, fw: Framework, state: CycleState, pod: Pod, att: Attempt,
                   statuses: dict[str, Status], absent: Status | None, absent_names: list[str],
                   pre_msg: str, num_all: int) -> None:
        post_msg = ""
        if fw.points["postFilter"]:
            full = dict(statuses)
            if absent is not None:
                for n in absent_names:
                    full.setdefault(n, absent)
            result, pst = fw.run_post_filter(state, pod, full)
            post_msg = pst.message
            if pst.code == Code.Error:
                log.info("PostFilter failed for %s: %s", pod.key, pst.message)
            if self.explain:
                att.preemption = explain_preemption(state.get(EXPLANATION), result.nominated_node_name
                                                    if result is not None else None, self.tie_break_by_name)
            if result is not None and result.nominated_node_name:
                att.nominated_node = result.nominated_node_name
                att.victim_pods = list(result.victims)
                att.victims = sorted(v.key for v in result.victims)
            elif result is not None and pod.nominated_node_name:
                self._clear_nomination(pod)
                att.nomination_cleared = True
        explicit = {n: s for n, s in statuses.items()}
        ext_names = {e.name for e in self.extenders}
        att.unschedulable_plugins |= {s.plugin for s in statuses.values() if s.plugin and s.plugin not in ext_names}
        att.message = fit_error_message(num_all, explicit, absent, len(absent_names), pre_msg, post_msg)
        att.result = "Unschedulable"
        return None

    def _apply_preemption(self, pod: Pod, att: Attempt) -> Pod:
        """Carry out a PostFilter nomination: delete the victims, clear the nominations of
        lower-priority pods on that node, nominate the preemptor (upstream
        ``prepareCandidate`` and the nominating part of ``handleSchedulingFailure``)."""
        node = att.nominated_node or ""
        for v in att.victim_pods:
            waiting = self.waiting.get(v.uid)
            if waiting is not None:
                # a victim still waiting at Permit is rejected, not deleted (upstream prepareCandidate)
                waiting.reject("DefaultPreemption", "preempted")
                continue
            self.sink.delete_pod(v, "Preempted", f"Preempted by pod {pod.uid} on node {node}")
        if self.queue is not None:
            for p in self.queue.nominator.pods_for_node(node):
                if p.priority < pod.priority and p.uid != pod.uid:
                    self._clear_nomination(p)
        nominated = dataclasses.replace(pod, nominated_node_name=node)
        if self.queue is not None:
            self.queue.nominator.add(nominated, node)
        self.sink.set_nominated_node(pod, node)
        return nominated
