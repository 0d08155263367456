"""One scheduling cycle (upstream ``schedule_one.go``): ``schedule_pod`` finds the nodes the
pod fits (:mod:`.filtering`), scores them and selects one (:mod:`.prioritizing`), and
returns a :class:`~kubesched.scheduler.results.ScheduleResult`, or raises a
:class:`~kubesched.scheduler.results.FitError` carrying the diagnosis (then PostFilter runs:
preemption) or a :class:`~kubesched.scheduler.results.CycleError`. The cycle then assumes and
binds (:mod:`.binding_cycle`) or handles the failure.

The cycle's outcome goes into an :class:`~kubesched.explanation.attempt.Attempt`; with
``explain`` an :class:`~kubesched.explanation.recorder.AttemptRecorder` observes each step
(:mod:`.observer`) and records per-node verdicts and scores into it as well.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kubesched.api.objects import Pod
from kubesched.explanation.attempt import Attempt
from kubesched.explanation.recorder import AttemptRecorder
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PODS_TO_ACTIVATE, PostFilterResult, QueuedPodInfo
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.status import Code
from kubesched.scheduler.binding_cycle import BindingCycle
from kubesched.scheduler.filtering import Feasible, FindNodes
from kubesched.scheduler.fiterror import NO_NODES_AVAILABLE
from kubesched.scheduler.handle import AlgorithmObserver, DroppedWrites, PreemptionWrites
from kubesched.scheduler.observer import CycleObserver
from kubesched.scheduler.prioritizing import Prioritize
from kubesched.scheduler.results import CycleError, FitError, ScheduleResult

log = logging.getLogger(__name__)


class SchedulingCycle(FindNodes, Prioritize, BindingCycle):
    """Finding a node for one pod; the state it reads besides the binding cycle's."""

    profiles: dict[str, Framework]
    explain: bool
    algorithm_observer: AlgorithmObserver | None
    writes: PreemptionWrites

    def schedule_one(self, qpi: QueuedPodInfo) -> Attempt:
        """Run one scheduling cycle (and, on success, the binding cycle) for ``qpi``."""
        pod = qpi.pod
        fw = self.profiles[pod.scheduler_name]
        self.cache.update_snapshot(self.snapshot)
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        att = Attempt(time=self.now(), profile=pod.scheduler_name, pod_attempts=qpi.attempts,
                      initial_attempt=qpi.initial_attempt_timestamp)
        recorder = AttemptRecorder(att, self.tie_break_by_name) if self.explain else None
        metrics = self.algorithm_observer
        if metrics is None:
            result = self.run_algorithm(fw, state, pod, att, recorder)
        else:
            metrics.before(state)
            started = time.perf_counter()
            result = self.run_algorithm(fw, state, pod, att, recorder)
            metrics.after(time.perf_counter() - started)
        if result is None:
            self._handle_scheduling_failure(qpi, att)
            return att
        self._assume_and_bind(fw, state, qpi, result.suggested_host, att)
        return att

    def run_algorithm(self, fw: Framework, state: CycleState, pod: Pod, att: Attempt,
                      observer: CycleObserver | None = None) -> ScheduleResult | None:
        """:meth:`schedule_pod` and, when no node fits, PostFilter (upstream
        ``schedulingCycle`` up to ``assume``); the outcome goes into ``att``. For a pod the
        scheduler must not act for, run it inside :meth:`dry_run`."""
        try:
            result = self.schedule_pod(fw, state, pod, observer, att.extender_seconds)
        except CycleError as err:
            att.result, att.message = "Error", str(err)
            return None
        except FitError as err:
            post = self.run_post_filter(fw, state, pod, err, observer)
            d = err.diagnosis
            att.unschedulable_plugins |= d.unschedulable_plugins
            att.pending_plugins |= d.pending_plugins
            att.result, att.message = "Unschedulable", str(err)
            if post is not None and post.nominated_node_name:
                att.nominated_node = post.nominated_node_name
                att.victim_pods = list(post.victims)
                att.victims = sorted(v.key for v in post.victims)
            elif post is not None and pod.nominated_node_name:
                att.nomination_cleared = True
            return None
        att.chosen = result.suggested_host
        return result

    def schedule_pod(self, fw: Framework, state: CycleState, pod: Pod, observer: CycleObserver | None = None,
                     timings: dict[str, float] | None = None) -> ScheduleResult:
        """Upstream ``schedulePod``: the node for ``pod``. Raises :class:`FitError` when no
        node fits and :class:`CycleError` when a plugin or an extender fails. ``timings``
        gets each extender call's seconds."""
        num_all = self.snapshot.num_nodes()
        if num_all == 0:
            raise CycleError(NO_NODES_AVAILABLE)
        timings = {} if timings is None else timings
        found = self.find_nodes_that_fit_pod(fw, state, pod, observer, timings)
        rows = found.rows
        if rows.size == 0:
            d = found.diagnosis
            ext_names = {e.name for e in self.extenders}
            for st in d.node_to_status.statuses.values():  # upstream Diagnosis.AddPluginStatus
                if st.plugin and st.plugin not in ext_names:
                    d.unschedulable_plugins.add(st.plugin)
                    if st.code == Code.Pending:
                        d.pending_plugins.add(st.plugin)
            raise FitError(pod, num_all, d)
        table = self.snapshot.table
        nominated = found.nominated_row is not None
        if nominated or rows.size == 1:  # upstream selects it without scoring
            host = table.names[found.nominated_row if found.nominated_row is not None else int(rows[0])]
            if observer is not None:
                self._score_for_explanation(fw, state, pod, found, observer, timings)
            return ScheduleResult(suggested_host=host, evaluated_nodes=found.evaluated, feasible_nodes=1)
        best = self.prioritize_nodes(fw, state, pod, rows, observer, timings, found.scored_infos)
        return ScheduleResult(suggested_host=self.select_host(best), evaluated_nodes=found.evaluated,
                              feasible_nodes=int(rows.size))

    def _score_for_explanation(self, fw: Framework, state: CycleState, pod: Pod, found: Feasible,
                               observer: CycleObserver, timings: dict[str, float]) -> None:
        """The scores upstream does not compute (one feasible node, or the nominated one),
        for a complete explanation; the extenders are not asked. A plugin's error here is
        the explanation's, not the cycle's. No host is drawn: the random stream stays the
        one upstream's cycle consumes, so ``explain`` never changes a later decision."""
        observer.score_skipped_upstream(found.nominated_row is not None)
        try:
            self.prioritize_nodes(fw, state, pod, found.rows, observer, timings, found.scored_infos,
                                  call_extenders=False)
        except CycleError:
            return

    def run_post_filter(self, fw: Framework, state: CycleState, pod: Pod, err: FitError,
                        observer: CycleObserver | None = None) -> PostFilterResult | None:
        """PostFilter over the diagnosis (upstream ``RunPostFilterPlugins`` in
        ``schedulingCycle``); its message joins the FitError's. DefaultPreemption deletes
        its victims through the plugins' handle (nothing, inside :meth:`dry_run`)."""
        if not fw.points["postFilter"]:
            return None
        result, st = fw.run_post_filter(state, pod, err.diagnosis.node_to_status.all())
        err.diagnosis.post_filter_msg = st.message
        if st.code == Code.Error:
            log.info("PostFilter failed for %s: %s", pod.key, st.message)
        if observer is not None:
            observer.post_filtered(result)
        return result

    @contextmanager
    def dry_run(self) -> Iterator[None]:
        """Within it, what the plugins ask the scheduler to write (preemption's victim
        deletions and cleared nominations) is dropped: for ``explain --fix``'s what-ifs and
        the shadow's decisions, which must never change the cluster or the queue."""
        saved = self.writes
        self.writes = DroppedWrites()
        try:
            yield
        finally:
            self.writes = saved

    def _handle_scheduling_failure(self, qpi: QueuedPodInfo, att: Attempt) -> None:
        """Upstream ``handleSchedulingFailure``: nominate the pod to the node PostFilter
        chose (or clear its nomination), report, and send the pod back to the queue."""
        pod = qpi.pod
        if att.nominated_node:
            qpi.pod = self._nominate(pod, att.nominated_node)
        elif att.nomination_cleared:
            self._clear_nomination(pod)
            qpi.pod = dataclasses.replace(pod, nominated_node_name="")
        qpi.unschedulable_plugins = set(att.unschedulable_plugins)
        if att.pending_plugins:
            qpi.pending_plugins = set(att.pending_plugins)
        self._report_failure(qpi.pod, att)
        self._requeue(qpi, error=att.result == "Error")

    def _nominate(self, pod: Pod, node: str) -> Pod:
        nominated = dataclasses.replace(pod, nominated_node_name=node)
        if self.queue is not None:
            self.queue.nominator.add(nominated, node)
        self.sink.set_nominated_node(pod, node)
        return nominated
