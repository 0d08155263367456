"""The scheduler answering "where would this pod land if ...?" for ``explain --fix``.

:class:`SchedulerWhatIf` implements :class:`kubesched.explanation.whatif.WhatIf` on a wired
scheduler (the simulator's, after its run; or a live one, its lock held by the caller):

- :meth:`~SchedulerWhatIf.try_pod` runs the real scheduling cycle (PreFilter, Filter,
  Score, select host, Reserve then Unreserve; PostFilter only when preemption is asked,
  and then only DefaultPreemption) for a pod that is not in the cache, inside the
  scheduler's dry run: nothing is assumed or bound, and the victims preemption would evict
  are only reported. The rotating start index and the RNG are put back afterwards, so the
  scheduler's later decisions are unchanged.
- :meth:`~SchedulerWhatIf.changed` applies temporary cache changes (nodes added or
  replaced, pods removed or added) and undoes them on exit, in reverse order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.policy import PriorityClass
from kubesched.explanation.attempt import Attempt
from kubesched.explanation.blockers import Blockers, find_blockers
from kubesched.explanation.whatif import Landing
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PODS_TO_ACTIVATE, ClusterObjects
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.scheduler.scheduler import Scheduler


class SchedulerWhatIf:
    def __init__(self, sched: Scheduler, priority_classes: Sequence[PriorityClass] = ()) -> None:
        self.sched = sched
        self.objects: ClusterObjects = sched.objects
        self.priority_classes: Sequence[PriorityClass] = tuple(priority_classes)
        self.cycles = 0  # dry cycles run (progress, figures)

    def node_infos(self) -> Sequence[NodeInfo]:
        self.sched.cache.update_snapshot(self.sched.snapshot)
        return self.sched.snapshot.table.infos

    def pending(self) -> Sequence[Pod]:
        """The pods waiting in the queue (not gated), nominations cleared."""
        queue = self.sched.queue
        if queue is None:
            return ()
        infos = [*queue.in_queue.values(), *queue.unschedulable.values()]
        return [dataclasses.replace(q.pod, nominated_node_name="") for q in infos]

    def blockers(self, pod: Pod) -> Blockers:
        sched = self.sched
        sched.cache.update_snapshot(sched.snapshot)
        return find_blockers(sched.profiles[pod.scheduler_name], sched.snapshot.table, sched.objects, pod,
                             sched.storage, sched.dra)

    def try_pod(self, pod: Pod, *, preempt: bool = False) -> Landing:
        sched = self.sched
        fw = sched.profiles.get(pod.scheduler_name)
        if fw is None:
            return Landing(None, message=f"no profile {pod.scheduler_name!r}")
        self.cycles += 1
        sched.cache.update_snapshot(sched.snapshot)
        post, observer, evaluations = list(fw.post_filter_plugins), fw.observer, dict(fw.evaluations)
        saved: tuple[int, Any] = (sched.next_start_node_index, sched.rng.getstate())
        fw.observer = None  # nothing of a dry cycle reaches the metrics
        # PostFilter: DefaultPreemption's dry run only when asked (DynamicResources' would write claims)
        _set_post_filters(fw, [pl for pl in post if preempt and pl.name == names.DEFAULT_PREEMPTION])
        try:
            if not preempt and not self._any_feasible(fw, pod):
                return Landing(None, message="no node passes every Filter")
            return self._cycle(fw, pod)
        finally:
            _set_post_filters(fw, post)
            fw.observer = observer
            fw.evaluations.clear()
            fw.evaluations.update(evaluations)
            sched.next_start_node_index = saved[0]
            sched.rng.setstate(saved[1])

    def _any_feasible(self, fw: Framework, pod: Pod) -> bool:
        """PreFilter and Filter only: does any node pass? (A failed cycle's FitError message
        asks every rejecting plugin for its reasons, which the search does not need.)"""
        snap = self.sched.snapshot
        table = snap.table
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        pre, st, _ = fw.run_pre_filter(state, pod, snap.node_infos)
        if not st.success:
            return not st.rejected  # an error: the full cycle reports it
        idx = table.all
        if pre is not None and pre.node_names is not None:
            idx = np.array(sorted(table.index[n] for n in pre.node_names if n in table.index), np.intp)
        out = fw.filter_nodes(state, pod, table, idx)
        return out.error is not None or out.feasible.size > 0

    def _cycle(self, fw: Framework, pod: Pod) -> Landing:
        """The scheduling cycle up to Reserve (undone by Unreserve): where the pod lands."""
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        att = Attempt(profile=pod.scheduler_name)
        with self.sched.dry_run():
            result = self.sched.run_algorithm(fw, state, pod, att)
        chosen = result.suggested_host if result is not None else None
        if chosen is not None:
            assumed = pod.evolve(node_name=chosen)
            st = fw.run_reserve(state, assumed, chosen)
            fw.run_unreserve(state, assumed, chosen)
            if not st.success:
                return Landing(None, message=f"{st.plugin}: {st.message}")
        return Landing(chosen, att.nominated_node, tuple(att.victim_pods), att.message or "")

    @contextmanager
    def changed(self, *, add_nodes: Sequence[Node] = (), set_nodes: Sequence[Node] = (),
                remove_pods: Sequence[Pod] = (), add_pods: Sequence[Pod] = ()) -> Iterator[None]:
        cache = self.sched.cache
        old_nodes = [cache.nodes[n.name].node for n in set_nodes if n.name in cache.nodes]
        removed: list[Pod] = []
        try:
            for n in add_nodes:
                cache.add_node(n)
            for n in set_nodes:
                cache.update_node(n)
            for p in remove_pods:
                cur = cache.get_pod(p.uid)
                if cur is not None:
                    cache.remove_pod(cur)
                    removed.append(cur)
            for p in add_pods:
                cache.add_pod(p)
            yield
        finally:
            for p in reversed(add_pods):
                cache.remove_pod(p)
            for p in removed:
                cache.add_pod(p)
            for old in old_nodes:
                if old is not None:
                    cache.update_node(old)
            for n in add_nodes:
                cache.remove_node(n)


def _set_post_filters(fw: Framework, plugins: list[Any]) -> None:
    """The profile's PostFilter plugins, in place (the runtime's typed list and the table of
    extension points may be one list or two)."""
    fw.post_filter_plugins[:] = plugins
    if fw.points["postFilter"] is not fw.post_filter_plugins:
        fw.points["postFilter"][:] = plugins
