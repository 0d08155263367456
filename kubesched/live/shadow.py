"""``kubesched run --shadow``: a scheduler that decides and explains but never acts.

It keeps the same informers and cache as :class:`~kubesched.live.scheduler.LiveScheduler`
but never starts the scheduling loop, and its writes are refused at the one gate every
write passes (the sink's ``fence``: binds, evictions, status patches, events, claims), so it
cannot bind, evict, patch or write events even by mistake. Instead, each time a pod is seen
going from unbound to bound (another scheduler bound it), the shadow runs one scheduling
cycle for the pod as it was, on its cache as it was just before that binding (the informer
holds the scheduler's lock while it hands the update over, so nothing else moves), up to
the choice of a node: no Reserve, Permit or binding, no preemption carried out. Then the
update is handled as usual (the pod joins the cache on the node it was bound to).

Verdicts (``result``), counted in ``kubesched_shadow_decisions_total{result=...}``:

``agree``        the shadow chose the node the pod was bound to
``tie``          it chose another node of the same, highest score: only the tie-break differs
``disagree``     it chose a node with a higher score than the bound one (or the bound node
                 did not pass its filters)
``unschedulable`` it found no node for the pod
``error``        its cycle failed (a plugin or extender error)
``no-profile``   the pod's ``schedulerName`` is not one of its profiles, and it has several

A pod whose ``schedulerName`` has no profile is decided by the only profile when the
configuration has one (so a config with ``schedulerName: kubesched`` shadows
``default-scheduler``'s traffic). Each decision is a line of the JSON-lines log
(``--shadow-log``); each verdict other than ``agree`` keeps its explanation (the scores of the
shadow's node and of the bound one, per plugin; the bound node's filter verdict) for
``/debug/shadow``, the newest :data:`KEPT` of them.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import IO, Any

from prometheus_client import Counter as PromCounter

from kubesched.api.objects import Pod
from kubesched.cluster.kube.client import KubeClient
from kubesched.cluster.kube.errors import FencedError
from kubesched.config import SchedulerConfig
from kubesched.explanation.attempt import Attempt
from kubesched.explanation.recorder import AttemptRecorder
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PODS_TO_ACTIVATE
from kubesched.framework.registry import Registry
from kubesched.live.scheduler import LiveOptions, LiveScheduler

log = logging.getLogger(__name__)

KEPT = 1000
RESULTS = ("agree", "tie", "disagree", "unschedulable", "error", "no-profile")


def _refuse() -> None:
    raise FencedError("shadow mode: kubesched never writes to the cluster")


class ShadowScheduler:
    def __init__(self, config: SchedulerConfig, client: KubeClient, options: LiveOptions = LiveOptions(),
                 registry: Registry | None = None, *, log_file: IO[str] | None = None) -> None:
        self.live = LiveScheduler(config, client, dataclasses.replace(options, result_annotations=False),
                                  registry, fence=_refuse)
        self.log_file = log_file
        self.counts: Counter[str] = Counter()
        self.kept: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._lock = threading.Lock()
        self.decisions = PromCounter("kubesched_shadow_decisions_total",
                                     "Bindings by another scheduler compared with the shadow's own decision, by result.",
                                     ["result"], registry=self.live.metrics.registry)
        for r in RESULTS:
            self.decisions.labels(result=r)
        handle: Callable[[Pod, Pod], None] | None = self.live.pods.on_update
        assert handle is not None

        def on_update(old: Pod, new: Pod) -> None:
            if new.node_name and not old.node_name:
                self.compare(old, new.node_name)
            handle(old, new)

        self.live.pods.on_update = on_update

    # -- running -----------------------------------------------------------------------------
    def start(self) -> None:
        self.live.start_informers()  # no scheduling loop: nothing is ever popped or bound

    @property
    def synced(self) -> bool:
        return all(i.has_synced for i in self.live.informers)

    def stop(self) -> None:
        self.live.stop()

    # -- deciding ----------------------------------------------------------------------------
    def _profile(self, pod: Pod) -> str | None:
        profiles = self.live.sched.profiles
        if pod.scheduler_name in profiles:
            return pod.scheduler_name
        return next(iter(profiles)) if len(profiles) == 1 else None

    def decide(self, pod: Pod) -> Attempt:
        """One scheduling cycle up to the choice of a node, on the cache as it is now."""
        sched = self.live.sched
        fw = sched.profiles[pod.scheduler_name]
        sched.cache.update_snapshot(sched.snapshot)
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        att = Attempt(time=sched.now(), profile=pod.scheduler_name)
        recorder = AttemptRecorder(att, sched.tie_break_by_name) if sched.explain else None
        with sched.dry_run():  # PostFilter's evictions are decided, never carried out
            if sched.run_algorithm(fw, state, pod, att, recorder) is not None:
                att.result = "Scheduled"
        self.live.store.add_attempt(pod.key, att)  # /debug/explain shows the shadow's decision
        return att

    def compare(self, pod: Pod, bound: str) -> dict[str, Any]:
        """Decide for ``pod`` (not yet bound) and compare with ``bound``; count and log it."""
        entry: dict[str, Any] = {"time": time.time(), "pod": pod.key, "uid": pod.uid,
                                 "schedulerName": pod.scheduler_name, "bound": bound}
        profile = self._profile(pod)
        if profile is None:
            entry.update(result="no-profile", shadow=None)
        else:
            try:
                att = self.decide(pod if profile == pod.scheduler_name else
                                  dataclasses.replace(pod, scheduler_name=profile))
            except Exception as exc:  # noqa: BLE001 - a plugin's bug is a verdict, never a stopped informer
                log.exception("shadow decision for %s failed", pod.key)
                entry.update(result="error", shadow=None, message=str(exc))
            else:
                entry.update(self._verdict(att, bound), profile=profile)
        self._record(entry)
        return entry

    def _verdict(self, att: Attempt, bound: str) -> dict[str, Any]:
        if att.result != "Scheduled":
            return {"result": "unschedulable" if att.result == "Unschedulable" else "error", "shadow": None,
                    "message": att.message}
        chosen = att.chosen or ""
        if chosen == bound:
            return {"result": "agree", "shadow": chosen, "tie": len(att.best) > 1}
        result = "tie" if bound in att.best else "disagree"
        totals = att.totals
        scores = att.scores
        return {"result": result, "shadow": chosen, "tie": len(att.best) > 1,
                "explanation": {"best": att.best[:20], "totals": {n: totals.get(n) for n in (chosen, bound)},
                                "scores": {n: scores.get(n) for n in (chosen, bound)},
                                "boundNodeFilter": att.filter.get(bound)}}

    def _record(self, entry: dict[str, Any]) -> None:
        result = entry["result"]
        self.decisions.labels(result=result).inc()
        with self._lock:
            self.counts[result] += 1
            if result != "agree":
                self.kept.append(entry)
            if self.log_file is not None:
                self.log_file.write(json.dumps(entry, separators=(",", ":"), default=str) + "\n")
                self.log_file.flush()
        if result != "agree":
            log.info("shadow: %s bound to %s, shadow chose %s (%s)", entry["pod"], entry["bound"],
                     entry.get("shadow"), result)

    def document(self) -> dict[str, Any]:
        """``/debug/shadow``: the counts and the kept explanations, newest last."""
        with self._lock:
            return {"counts": {r: self.counts.get(r, 0) for r in RESULTS}, "decisions": sum(self.counts.values()),
                    "kept": list(self.kept)}
