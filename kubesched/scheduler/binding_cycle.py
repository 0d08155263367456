"""The end of a scheduling cycle and the binding cycle (upstream ``schedule_one.go``:
``assume``, Reserve, Permit, ``bindingCycle``, ``handleBindingCycleError``,
``handleSchedulingFailure``): a mixin of :class:`~kubesched.scheduler.scheduler.Scheduler`
holding the state it shares with the scheduling cycle."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.explanation.attempt import Attempt
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extender, ExtenderError
from kubesched.framework.interface import PODS_TO_ACTIVATE, ClusterSink, QueuedPodInfo
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.waiting import WaitingPod, WaitingPods
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.queue.clusterevents import EVENT_ASSIGNED_POD_DELETE
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.scheduler.fiterror import fit_error_message

log = logging.getLogger(__name__)


class BindingCycle:
    """Assume, Reserve, Permit, bind, and what a failure undoes."""

    cache: Cache
    sink: ClusterSink
    queue: SchedulingQueue | None
    waiting: WaitingPods
    lock: threading.RLock
    now: Callable[[], float]
    run_binding: Callable[[Callable[[], None]], None] | None
    extenders: tuple[Extender, ...]
    current_pod: Callable[[Pod], Pod | None] | None
    # NominatedNodeNameForExpectation (on from 1.35): writes status.nominatedNodeName at once
    # (against an API server; set by the live scheduler when the gate is on)
    nominate_for_expectation: Callable[[Pod, str], None] | None = None

    def _assume_and_bind(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, node: str,
                         att: Attempt) -> None:
        """The end of the scheduling cycle (assume, Reserve, Permit), then the binding cycle:
        at once, or when the pod stops waiting at Permit (:meth:`process_waiting`)."""
        pod = qpi.pod
        assumed = pod.evolve(node_name=node)
        self.cache.assume_pod(assumed)
        if self.queue is not None:
            self.queue.nominator.delete(pod)  # upstream assume(): the pod no longer needs it
        ctx = BindingContext(fw, state, qpi, assumed, node, att)
        st = fw.run_reserve(state, assumed, node)
        if not st.success:
            self._binding_failed(ctx, self._as_fit_error(st, node))
            return
        st, waits = fw.run_permit(state, assumed, node)
        if st.code == Code.Wait:
            now = self.now()
            self.waiting.add(WaitingPod(assumed, node, {p: now + t for p, t in waits.items()},
                                        context=ctx, waits=dict(waits)))
            att.result = "Waiting"
            self._expect(ctx)  # upstream: WillWaitOnPermit, so the binding cycle nominates
            self._activate(state)
            return
        if not st.success:
            self._binding_failed(ctx, self._as_fit_error(st, node))
            return
        self._activate(state)
        self._start_binding(ctx)

    def _activate(self, state: CycleState) -> None:
        """Move the pods plugins asked for (PodsToActivate) to activeQ."""
        pods = state.get(PODS_TO_ACTIVATE)
        if pods and self.queue is not None:
            with self.lock:
                self.queue.activate(pods)
            pods.clear()

    @staticmethod
    def _as_fit_error(st: Status, node: str) -> Status:
        """A Reserve/Permit rejection in the scheduling cycle reads as a FitError over the one
        chosen node (upstream schedulingCycle): ``0/1 nodes are available: 1 <reason>.``"""
        if not st.rejected:
            return st
        msg = fit_error_message(1, {node: st}, None, 0, "", "")
        return Status(st.code, (msg,), st.plugin)

    def _start_binding(self, ctx: "BindingContext") -> None:
        if self.run_binding is None:
            self._binding_cycle(ctx)
        else:
            ctx.att.result = "Binding"
            self.run_binding(lambda: self._binding_cycle(ctx))

    def process_waiting(self) -> int:
        """Resolve pods waiting at Permit that were allowed, rejected or timed out; returns
        how many finished."""
        done = 0
        now = self.now()
        for wp in self.waiting:
            wp.expire(now)
            if wp.result is None:
                continue
            self.waiting.remove(wp.pod.uid)
            done += 1
            ctx = wp.context
            if wp.result.success:
                self._start_binding(ctx)
            else:
                self._binding_failed(ctx, wp.result)
        return done

    def _expect(self, ctx: "BindingContext") -> None:
        """Upstream 1.35 ``bindingCycle`` with NominatedNodeNameForExpectation: tell other
        components (the cluster autoscaler) where the pod is about to go, when Permit waits
        or PreBind has work; a pod bound at once needs no interim status."""
        if self.nominate_for_expectation is None or ctx.expected:
            return
        ctx.expected = True
        if ctx.qpi.pod.nominated_node_name != ctx.node:
            self.nominate_for_expectation(ctx.qpi.pod, ctx.node)

    def _binding_cycle(self, ctx: "BindingContext") -> None:
        fw, state, node = ctx.fw, ctx.state, ctx.node
        st = SUCCESS
        if self.nominate_for_expectation is not None:
            st = fw.run_pre_bind_pre_flights(state, ctx.assumed, node)
            if st.success:
                self._expect(ctx)
            elif st.code == Code.Skip:
                st = SUCCESS
        if st.success:
            st = fw.run_pre_bind(state, ctx.assumed, node)
        if st.success:
            bound = self._extenders_binding(ctx.assumed, node) if self.extenders else None
            st = fw.run_bind(state, ctx.assumed, node) if bound is None else bound
        if not st.success:
            ctx.in_binding_cycle = True
            self._binding_failed(ctx, st)
            return
        with self.lock:
            self.cache.finish_binding(ctx.assumed, self.now())
            ctx.att.result = "Scheduled"
            ctx.att.chosen = node
            if self.queue is not None:
                self.queue.done(ctx.assumed.uid)
        self._activate(state)
        self.sink.record_event(ctx.assumed, "Normal", "Scheduled",
                               f"Successfully assigned {ctx.assumed.key} to {node}")
        fw.run_post_bind(state, ctx.assumed, node)

    def _extenders_binding(self, pod: Pod, node: str) -> Status | None:
        """Upstream ``extendersBinding``: the first interested binder extender binds (an
        ignorable one's error skips it); None when no extender bound. In simulate the
        extender cannot write the in-process cluster, so its success is recorded there;
        against an API server the extender's own Binding is what the informers see."""
        for ext in self.extenders:
            if not ext.is_binder or not ext.is_interested(pod):
                continue
            try:
                ext.bind(pod, node)
            except ExtenderError as exc:
                if ext.ignorable:
                    log.warning("extender %s (ignorable) failed to bind pod %s, skipped: %s", ext.name, pod.key, exc)
                    continue
                return Status(Code.Error, (str(exc),), ext.name)
            if self.run_binding is None:
                return self.sink.bind(pod, node)
            return Status()
        return None

    def _binding_failed(self, ctx: "BindingContext", st: Status) -> None:
        """Unreserve in reverse order, forget the assumed pod, send the pod back."""
        with self.lock:
            self._binding_failed_locked(ctx, st)

    def _binding_failed_locked(self, ctx: "BindingContext", st: Status) -> None:
        ctx.fw.run_unreserve(ctx.state, ctx.assumed, ctx.node)
        if self.cache.is_assumed(ctx.assumed):
            self.cache.forget_pod(ctx.assumed)
        if ctx.expected and not ctx.qpi.pod.nominated_node_name:
            ctx.qpi.pod = ctx.qpi.pod.evolve(nominated_node_name=ctx.node, raw=_nominated_raw(ctx.qpi.pod, ctx.node))
        if ctx.qpi.pod.nominated_node_name:
            # every failure but a FitError clears the nomination (upstream clearNominatedNode)
            self._clear_nomination(ctx.qpi.pod)
            ctx.qpi.pod = dataclasses.replace(ctx.qpi.pod, nominated_node_name="")
        att = ctx.att
        att.result = "Error" if st.code == Code.Error else "Unschedulable"
        att.message = st.message or f"plugin {st.plugin} rejected the pod"
        att.chosen = None
        if st.plugin:
            att.unschedulable_plugins.add(st.plugin)
        qpi = ctx.qpi
        qpi.unschedulable_plugins = set(att.unschedulable_plugins)
        self._report_failure(qpi.pod, att)
        self._requeue(qpi, error=st.code == Code.Error)
        if ctx.in_binding_cycle and self.queue is not None:
            # upstream handleBindingCycleError: the forgotten pod freed room on its node
            uid = ctx.assumed.uid
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, ctx.assumed, None,
                (lambda p: p.uid != uid) if st.rejected else None)

    def _report_failure(self, pod: Pod, att: Attempt) -> None:
        """A FailedScheduling event and the PodScheduled=False condition (upstream
        handleSchedulingFailure; an Error is reported with reason SchedulerError)."""
        msg = att.message or ""
        self.sink.record_event(pod, "Warning", "FailedScheduling", msg)
        reason = "SchedulerError" if att.result == "Error" else "Unschedulable"
        self.sink.set_pod_scheduled_condition(pod, "False", reason, msg)

    def _requeue(self, qpi: QueuedPodInfo, error: bool) -> None:
        if self.queue is None:
            return
        if self.current_pod is not None:
            cur = self.current_pod(qpi.pod)
            if cur is None or cur.node_name:
                self.queue.done(qpi.pod.uid)
                return  # deleted or bound meanwhile: nothing to retry
            qpi.pod = dataclasses.replace(cur, nominated_node_name=qpi.pod.nominated_node_name)
        self.queue.add_unschedulable(qpi, error=error)

    def _clear_nomination(self, pod: Pod) -> None:
        if self.queue is not None:
            self.queue.nominator.delete(pod)
        self.sink.set_nominated_node(pod, "")


@dataclass
class BindingContext:
    fw: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: Pod
    node: str
    att: Attempt
    in_binding_cycle: bool = False
    expected: bool = False  # the interim nominatedNodeName was written


def _nominated_raw(pod: Pod, node: str) -> dict[str, Any]:
    """The pod's object as the API server holds it after the interim nomination (so the
    failure's clearing write sees a value to clear)."""
    raw = dict(pod.raw)
    raw["status"] = {**(raw.get("status") or {}), "nominatedNodeName": node}
    return raw
