"""The simulation driver: load a cluster, run the real scheduler on it, collect outcomes.

``Simulation`` wires the in-process cluster, the cache, the queue and one Framework per
profile, exactly as a live scheduler is wired, on a virtual clock. ``run(single_pass=True)``
gives every pending pod exactly one attempt in queue order (with an immediate second
attempt after a successful preemption); ``run()`` keeps the queue going until nothing
more can happen.

Pods that finished (``status.phase`` Succeeded or Failed) are invisible to the scheduler,
as upstream's pod informer lists and watches without them: they are kept in
``completed`` (reported as ``ignoredPods``), never loaded. A pending pod being deleted
(``metadata.deletionTimestamp``) is popped but not scheduled (upstream ``skipPodSchedule``).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from kubesched.cluster.extender import HTTPExtender
from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cluster.dra import InProcessDra
from kubesched.cluster.inprocess import ClusterChange, InProcessCluster
from kubesched.cluster.storage import InProcessStorage
from kubesched.config import SchedulerConfig
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.framework.events import ActionType, Resource
from kubesched.framework.interface import QueuedPodInfo
from kubesched.plugins.preemption.pdb import disruptions_allowed
from kubesched.framework.features import Features
from kubesched.framework.resized import as_counted
from kubesched.explanation.attempt import Attempt
from kubesched.scheduler.factory import QueueOptions, new_scheduler
from kubesched.sim.clock import VirtualClock
from kubesched.sim.timeline import Timeline

MAX_ATTEMPTS_PER_POD = 50
TERMINAL_PHASES = ("Succeeded", "Failed")
DELETING = "pod is being deleted"


@dataclass
class PodOutcome:
    pod: Pod
    status: str = "Pending"  # Scheduled | Unschedulable | Gated | Preempted | Error
    node: str | None = None
    message: str | None = None
    nominated_node: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    preempted: list[str] = field(default_factory=list)
    preempted_by: str | None = None
    skipped: str | None = None  # why the pod was popped but not scheduled
    gated: str | None = None  # "Plugin: reason" of the PreEnqueue plugin holding the pod

    def to_json(self, explain: bool) -> dict[str, Any]:
        d: dict[str, Any] = {"namespace": self.pod.namespace, "name": self.pod.name,
                             "status": self.status, "node": self.node, "message": self.message,
                             "priority": self.pod.priority,
                             "nominatedNode": self.nominated_node, "preempted": self.preempted}
        if self.preempted_by is not None:
            d["preemptedBy"] = self.preempted_by
        if self.skipped is not None:
            d["skipped"] = self.skipped
        if self.gated is not None:
            d["gated"] = self.gated
        refs = (self.pod.raw.get("metadata") or {}).get("ownerReferences")
        if refs:  # which workload made the pod, as its controller set it
            d["ownerReferences"] = refs
        if explain:
            d["attempts"] = [a.to_json() for a in self.attempts]
        return d


class Simulation:
    def __init__(self, manifest: Any, config: SchedulerConfig, seed: int = 0,
                 tie_break: str = "random", explain: bool = False, timeline: bool = False,
                 features: Features | None = None) -> None:
        """``features``: the Kubernetes release and feature gates to decide as (default: the
        release ``manifest`` recorded, else the default release)."""
        self.clock = VirtualClock()
        self.timeline = Timeline(enabled=timeline)
        self.generation = 0  # bumped by every cluster change
        self._tried_at: dict[str, int] = {}  # pod uid -> generation at its last attempt
        self.cluster = InProcessCluster(self.clock.now)
        self.completed = [p for p in manifest.pods if p.phase in TERMINAL_PHASES]
        pods = [p for p in manifest.pods if p.phase not in TERMINAL_PHASES]
        # A StatefulSet's OrderedReady pod is created once the previous ordinal is scheduled.
        after: dict[str, str] = getattr(manifest, "after", {})
        self.waiting: dict[str, Pod] = {after[p.key]: p for p in pods if p.key in after}
        self.not_created = {p.key: after[p.key] for p in self.waiting.values()}
        self.owners: dict[str, list[str]] = getattr(manifest, "owners", {})  # workload -> its pods' keys
        self._single_pass_order: list[PodOutcome] | None = None
        pods = [p for p in pods if p.key not in after]
        bound = [p for p in pods if p.node_name]
        # A PDB without status gets the budget the disruption controller would compute from
        # the pods running at the start (there is no controller to keep it current).
        pdbs = [pdb if pdb.disruptions_allowed is not None else
                dataclasses.replace(pdb, disruptions_allowed=disruptions_allowed(pdb, bound))
                for pdb in manifest.pdbs]
        self.cluster.load(manifest.nodes, pods, manifest.namespaces,
                          manifest.priority_classes, pdbs, manifest.pod_groups, manifest.workloads)
        self.storage = InProcessStorage(self.cluster.nodes.get)
        self.storage.load(manifest.storage)
        self.storage.create_ephemeral_claims(manifest.pods)
        self.dra = InProcessDra()
        self.dra.load(manifest.dra)
        self.dra.create_template_claims(p for p in pods if not p.node_name)
        self.cache = Cache()
        for n in manifest.nodes:
            self.cache.add_node(n)
        features = features or Features.for_version(getattr(manifest, "kubernetes_version", None))
        for p in self.cluster.pods.values():
            if p.node_name:
                self.cache.add_pod(as_counted(p, features))
        self.sched = new_scheduler(
            config, cache=self.cache, sink=self.cluster, objects=self.cluster, now=self.clock.now,
            rng=random.Random(seed), tie_break_by_name=tie_break == "name", explain=explain,
            storage=self.storage, storage_writer=self.storage, dra=self.dra, dra_writer=self.dra,
            extenders=[HTTPExtender(e) for e in config.extenders],
            features=features,
            queue=QueueOptions(pod_lister=lambda p: self.cluster.pods.get(p.uid), listener=self.timeline.on_move))
        self.features = self.sched.features
        self.explain = explain
        profiles = self.sched.profiles
        assert self.sched.queue is not None
        self.queue = self.sched.queue
        self.handlers = EventHandlers(self.sched)
        self.outcomes: dict[str, PodOutcome] = {}
        self.on_attempt: Callable[[Attempt], None] | None = None  # e.g. a progress bar, after each attempt
        self.ignored: list[Pod] = []
        for p in sorted((p for p in self.cluster.pods.values() if not p.node_name), key=lambda p: p.seq):
            if p.scheduler_name not in profiles:
                self.ignored.append(p)
                continue
            self.outcomes[p.uid] = PodOutcome(p)
        self.cluster.listeners.append(self._on_change)
        self.storage.listeners.append(self._on_object_change)
        self.dra.listeners.append(self._on_object_change)

    def _create_next(self, key: str) -> None:
        """The pod waiting for ``key`` to be scheduled (OrderedReady) is created now."""
        pod = self.waiting.pop(key, None)
        if pod is None:
            return
        del self.not_created[pod.key]
        self.cluster.load((), [pod])
        if pod.scheduler_name not in self.sched.profiles:
            self.ignored.append(pod)
            return
        out = self.outcomes[pod.uid] = PodOutcome(pod)
        if self._single_pass_order is not None:
            self._single_pass_order.append(out)  # tried once, in turn
        else:
            self.handlers.on_pod_add(pod)  # the informer's add: queued

    def _pre_enqueue(self, pod: Pod) -> Any:
        return self.sched.profiles[pod.scheduler_name].run_pre_enqueue(pod)

    # -- cluster changes, as informers would deliver them ---------------------------------
    def _on_change(self, ch: ClusterChange) -> None:
        """Upstream's informer handlers (kubesched.scheduler.eventhandlers), with the objects of each event."""
        self.generation += 1
        pod = ch.pod
        if ch.kind == "pod-bound":
            self.timeline.bind(self.clock.now(), pod)
            self.handlers.on_pod_update(ch.old if ch.old is not None else pod, pod)
            if self.waiting:
                self._create_next(pod.key)
        elif ch.kind == "pod-deleted":
            self.timeline.deleted(self.clock.now(), pod, self.cluster.deleted.get(pod.uid, (pod, ""))[1])
            self.handlers.on_pod_delete(pod)
            out = self.outcomes.get(pod.uid)
            if out is not None:
                out.status = "Preempted"
        elif ch.kind == "pod-updated" and ch.old is not None:
            self.handlers.on_pod_update(ch.old, pod)

    def _on_object_change(self, kind: str, old: Any, new: Any) -> None:
        """A PV or PVC written by PreBind or the emulated controllers, or a ResourceClaim
        written by DynamicResources' PreBind or PostFilter, as its informer would deliver it
        (the plugins' QueueingHints decide who moves)."""
        self.generation += 1
        action = ActionType.Add if old is None else ActionType.Update
        self.handlers.on_object_event(Resource(kind), action, old, new)

    # -- running ------------------------------------------------------------------------
    def _record(self, pod: Pod, att: Attempt) -> None:
        out = self.outcomes[pod.uid]
        out.attempts.append(att)
        self.timeline.attempt(att.time, pod, att, len(out.attempts))
        if att.nominated_node:
            out.nominated_node = att.nominated_node
            out.preempted.extend(att.victims)
            for v in att.victim_pods:
                vo = self.outcomes.setdefault(v.uid, PodOutcome(v))
                vo.status, vo.preempted_by, vo.node = "Preempted", pod.key, v.node_name

    def _finish(self) -> None:
        """Each pod's outcome from its last attempt (a Permit wait resolves after it ran)."""
        for out in self.outcomes.values():
            if out.status == "Preempted" or not out.attempts:
                continue
            last = out.attempts[-1]
            if last.result == "Scheduled":
                out.status, out.node, out.message, out.nominated_node = "Scheduled", last.chosen, None, None
            else:
                out.status = {"Error": "Error", "Waiting": "Waiting"}.get(last.result, "Unschedulable")
                out.message = last.message

    def _attempt(self, qpi: QueuedPodInfo) -> Attempt:
        self._tried_at[qpi.pod.uid] = self.generation
        att = self.sched.schedule_one(qpi)
        self._record(qpi.pod, att)
        if self.on_attempt is not None:
            self.on_attempt(att)
        self.sched.process_waiting()
        self._done_with_finished()
        return att

    def _done_with_finished(self) -> None:
        """Pods whose attempt is over (not waiting at Permit) are no longer in flight."""
        for uid in self.queue.in_flight_uids():
            if self.sched.waiting.get(uid) is None:
                self.queue.done(uid)

    def run(self, single_pass: bool = False) -> None:
        if single_pass:
            self._run_single_pass()
        else:
            self._run_queue()
        self._finish()
        for out in self.outcomes.values():
            if out.status == "Pending":
                gated = self.queue.gated.get(out.pod.uid)
                if gated is not None:
                    st = self._pre_enqueue(out.pod)
                    out.status = "Gated"
                    out.message = st.message
                    out.gated = f"{st.plugin}: {st.message}" if st.plugin else st.message

    def _skip(self, pod: Pod) -> bool:
        """Upstream ``skipPodSchedule`` for a popped pod: a pod being deleted is not tried."""
        if pod.deletion_timestamp is None or not self.handlers.skip_pod_schedule(pod):
            return False
        self.outcomes[pod.uid].skipped = DELETING
        self.queue.done(pod.uid)
        return True

    def _run_single_pass(self) -> None:
        order = sorted(self.outcomes.values(), key=lambda o: (-o.pod.priority, o.pod.seq))
        self._single_pass_order = order  # pods created by a binding join its end
        for out in order:
            pod = self.cluster.pods.get(out.pod.uid)
            if pod is None or pod.node_name:
                continue
            if self._skip(pod):
                continue
            if not self._pre_enqueue(pod).success:
                self.queue.add(pod)  # parks it as gated
                continue
            qpi = QueuedPodInfo(pod=pod, timestamp=self.clock.now(), attempts=1)
            att = self._attempt(qpi)
            if att.nominated_node:
                again = self.cluster.pods.get(pod.uid)
                if again is not None and not again.node_name:
                    second = self._attempt(QueuedPodInfo(pod=again, timestamp=self.clock.now(), attempts=2))
                    if second.chosen is None and second.nomination_cleared:
                        self._keep_nomination(pod.uid, att.nominated_node)

    def _keep_nomination(self, uid: str, node: str) -> None:
        """The corpus' single-pass harness keeps the pod it retried with
        ``status.nominatedNodeName`` set as written: a failed second attempt (an extender
        rejecting the nominated node) leaves that nomination in place for later pods."""
        pod = self.cluster.pods.get(uid)
        if pod is None or pod.node_name:
            return
        nominated = dataclasses.replace(pod, nominated_node_name=node)
        self.queue.nominator.add(nominated, node)
        self.cluster.set_nominated_node(pod, node)

    def _run_queue(self) -> None:
        for out in self.outcomes.values():
            self.queue.add(self.cluster.pods[out.pod.uid])
        budget = MAX_ATTEMPTS_PER_POD * max(1, len(self.outcomes))
        while budget > 0:
            qpi = self.queue.pop()
            if qpi is None:
                if not self._advance():
                    break
                continue
            budget -= 1
            if self._skip(qpi.pod):
                continue
            self._attempt(qpi)

    def _advance(self) -> bool:
        """Nothing to try now: move the clock to the next thing upstream's timers would do
        (a Permit timeout, an error backoff ending, a 30 s flush of pods that waited
        podMaxInUnschedulablePodsDuration) and do it. A retry only counts as something if
        the cluster changed since the pod's last attempt; when nothing counts, the
        simulation is over (retrying would repeat the same failures forever)."""
        wakeups = [(t, self._tried_at.get(q.pod.uid) != self.generation)
                   for t, q in self.queue.backoff_completions() + self.queue.leftover_flushes()]
        deadline = self.sched.waiting.next_deadline()
        if deadline is not None:
            wakeups.append((deadline, True))
        if not any(useful for _, useful in wakeups):
            return False
        self.clock.advance_to(min(t for t, _ in wakeups))
        self.queue.run_periodic_flushes()
        self.sched.process_waiting()
        self._done_with_finished()
        return True

    # -- results ------------------------------------------------------------------------
    def results(self) -> list[PodOutcome]:
        return sorted(self.outcomes.values(), key=lambda o: o.pod.seq)

    def summary(self) -> dict[str, int]:
        s = {"scheduled": 0, "unschedulable": 0, "gated": 0, "preempted": 0, "error": 0}
        for o in self.outcomes.values():
            key = o.status.lower()
            s[key] = s.get(key, 0) + 1
        s["ignored"] = len(self.ignored)
        skipped = sum(1 for o in self.outcomes.values() if o.skipped is not None)
        if skipped:  # pending pods being deleted
            s["skipped"] = skipped
        if self.completed:  # finished pods, invisible to the scheduler
            s["completed"] = len(self.completed)
        if self.not_created:  # OrderedReady pods whose previous ordinal was never scheduled
            s["notCreated"] = len(self.not_created)
        return s

    def ignored_pods(self) -> list[str]:
        """The finished pods the scheduler never saw, ``namespace/name``, sorted."""
        return sorted(p.key for p in self.completed)
