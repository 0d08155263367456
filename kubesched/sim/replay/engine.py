"""``kubesched replay``: a workload trace on the virtual clock, through the real scheduler.

The cluster is wired as ``kubesched simulate`` wires it (:class:`~kubesched.sim.driver.Simulation`:
cache, queue with backoff and the unschedulable pool, one Framework per profile); the
trace's pods are then created at their arrival times and deleted when they finish, and the
queue runs between events exactly as it does in a live scheduler: failed pods wait in the
unschedulable pool until a cluster event (a pod finishing frees room) or the 5-minute
leftover flush moves them, with backoff.

The event loop, on one heap ``(time, order, seq, event)`` (``seq`` from a counter, so equal
times keep their order; SimPy's scheme):

1. take every event due at the current time — deletions before arrivals (room a pod
   frees at time t is there for a pod arriving at t), arrivals in trace order;
2. run the queue until nothing can be popped (each pop is one scheduling cycle; a bind
   schedules the pod's deletion at bind time + ``duration``);
3. record a sample of the metrics (:mod:`.metrics`);
4. move the clock to the next event, the next error-backoff expiry, a Permit timeout, or
   the next 30 s tick of upstream's ``flushUnschedulablePodsLeftover`` — a tick is skipped
   when nothing changed in the cluster since the previous one, as its retries could only
   repeat the same failures. The run ends when no event is left and nothing can be popped.

The manifest's own pending pods arrive at time 0 and never finish. A pod a preemption
deletes is gone, as upstream's preemption deletes it (no controller recreates it here);
it is counted as ``preempted``.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time as wall
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.objects import Pod
from kubesched.cluster.inprocess import ClusterChange
from kubesched.queue.scheduling_queue import UNSCHEDULABLE_FLUSH_INTERVAL
from kubesched.sim.capacity.common import RunOptions, wire
from kubesched.sim.driver import PodOutcome, Simulation
from kubesched.sim.replay.metrics import Metrics
from kubesched.sim.replay.trace import TraceEntry

Progress = Callable[[int, int, float], None]  # (pods arrived, total, virtual time)
DELETE, ARRIVE = 0, 1  # event order at equal times
PROGRESS_EVERY = 256  # events between two progress reports


@dataclass
class PodRecord:
    pod: str
    arrival: float
    bind: float | None = None
    node: str | None = None
    deleted: float | None = None
    attempts: int = 0
    preempted: bool = False  # deleted by a preemption (nothing recreates it)

    @property
    def latency(self) -> float | None:
        return None if self.bind is None else self.bind - self.arrival

    def to_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "arrival": self.arrival, "bind": self.bind, "node": self.node,
                "latency": self.latency, "deleted": self.deleted, "attempts": self.attempts,
                "preempted": self.preempted}


@dataclass
class ReplayResult:
    pods: list[PodRecord]
    series: list[dict[str, float]]
    end: float  # virtual time of the last event
    wall_seconds: float
    attempts: int
    nodes: int
    extra: dict[str, Any] = field(default_factory=dict)

    def latencies(self) -> list[float]:
        return sorted(lat for p in self.pods if (lat := p.latency) is not None)

    def summary(self) -> dict[str, Any]:
        lat = self.latencies()

        def pct(q: int) -> float | None:  # nearest rank
            return lat[max(0, math.ceil(len(lat) * q / 100) - 1)] if lat else None

        never = [p for p in self.pods if p.bind is None]
        return {"pods": len(self.pods), "scheduled": len(lat), "neverScheduled": len(never),
                "deletedPending": sum(1 for p in never if p.deleted is not None),
                "preempted": sum(1 for p in self.pods if p.preempted),
                "latencyMean": sum(lat) / len(lat) if lat else None, "latencyP50": pct(50),
                "latencyP90": pct(90), "latencyP99": pct(99), "latencyMax": lat[-1] if lat else None,
                "virtualSeconds": self.end, "wallSeconds": round(self.wall_seconds, 3),
                "attempts": self.attempts, "nodes": self.nodes}

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary(), "series": self.series, "pods": [p.to_json() for p in self.pods]}


class Replay:
    def __init__(self, manifest: Manifest, entries: Sequence[TraceEntry], opts: RunOptions, *,
                 explain: bool = False) -> None:
        """``explain``: keep each attempt's best nodes (a recording's replay reports ties)."""
        self.sim: Simulation = wire(manifest, opts, explain=explain)
        self.entries = entries
        self.heap: list[tuple[float, int, int, Any]] = []
        self.seq = itertools.count()
        self.records: dict[str, PodRecord] = {}  # uid -> record
        self.durations: dict[str, float] = {}
        self.finishing: str | None = None  # uid of the pod the trace is deleting
        self.arrived = 0
        self.attempts = 0
        self.metrics = Metrics(manifest.nodes, [e.pod for e in entries])
        for p in self.sim.cluster.pods.values():
            if p.node_name:
                self.metrics.bound(p)
        pending = [p for p in self.sim.cluster.pods.values() if not p.node_name]
        self.sim.outcomes.clear()
        for p in sorted(pending, key=lambda p: p.seq):
            self.sim.cluster.pods.pop(p.uid)  # created again by its arrival at 0
            self._push(0.0, ARRIVE, (p, None))
        for e in entries:
            self._push(e.time, ARRIVE, (e.pod, e))
            if e.delete_at is not None:
                self._push(e.delete_at, DELETE, e.pod.uid)
            if e.duration is not None:
                self.durations[e.pod.uid] = e.duration
        self.total = len(entries) + len(pending)
        self.sim.cluster.listeners.append(self._on_change)

    def _push(self, t: float, order: int, payload: Any) -> None:
        heapq.heappush(self.heap, (t, order, next(self.seq), payload))

    def _on_change(self, ch: ClusterChange) -> None:
        now = self.sim.clock.now()
        rec = self.records.get(ch.pod.uid)
        if ch.kind == "pod-bound":
            self.metrics.bound(ch.pod)
            if rec is not None:
                rec.bind, rec.node = now, ch.pod.node_name
            d = self.durations.get(ch.pod.uid)
            if d is not None:
                self._push(now + d, DELETE, ch.pod.uid)
        elif ch.kind == "pod-deleted":
            if ch.pod.node_name:
                self.metrics.unbound(ch.pod)
            if rec is not None:
                rec.deleted = now
                rec.preempted = ch.pod.uid != self.finishing

    # -- events ---------------------------------------------------------------------------
    def _arrive(self, pod: Pod) -> None:
        sim = self.sim
        sim.cluster.load((), [pod])
        if pod.scheduler_name not in sim.sched.profiles:
            return  # another scheduler's pod: never ours to schedule, not measured
        self.records[pod.uid] = PodRecord(pod.key, sim.clock.now())
        sim.outcomes[pod.uid] = PodOutcome(pod)
        sim.queue.add(pod)
        self.arrived += 1

    def _delete(self, uid: str) -> None:
        sim = self.sim
        pod = sim.cluster.pods.get(uid)
        if pod is None:
            return  # deleted already (preempted)
        sim.outcomes.pop(uid, None)  # the driver would mark a pod it tracks as preempted
        self.finishing = uid
        sim.cluster.delete_pod(pod, "Completed", "finished (trace)")
        self.finishing = None
        sim.cluster.deleted.pop(uid, None)  # kept for simulate's report only: bound memory

    def _dispatch(self, kind: int, payload: Any) -> None:
        if kind == ARRIVE:
            self._arrive(payload[0])
        else:
            self._delete(payload)

    def _drain(self) -> None:
        sim = self.sim
        while (qpi := sim.queue.pop()) is not None:
            self.attempts += 1
            rec = self.records.get(qpi.pod.uid)
            if rec is not None:
                rec.attempts += 1
            if sim._skip(qpi.pod):
                continue
            att = sim._attempt(qpi)
            self._after_attempt(qpi.pod, att)
            if att.result == "Scheduled":
                sim.outcomes.pop(qpi.pod.uid, None)  # a bound pod's record is never read again

    def _after_attempt(self, pod: Pod, att: Any) -> None:
        """Told of each attempt (a recording's replay notes ties)."""

    def _next_time(self, last_tick_gen: int) -> float | None:
        sim = self.sim
        now = sim.clock.now()
        times = []
        if self.heap:
            times.append(self.heap[0][0])
        for t in (sim.queue.next_backoff_expiry(), sim.sched.waiting.next_deadline()):
            if t is not None:  # the periodic flushes ran at ``now``: anything due is gone
                times.append(t if t > now else now + 1.0)
        if sim.generation != last_tick_gen and sim.queue.unschedulable_pods and self.heap:
            step = UNSCHEDULABLE_FLUSH_INTERVAL
            k = math.floor((now - sim.queue.started) / step + 1e-9) + 1
            times.append(sim.queue.started + k * step)
        return min(times) if times else None

    def run(self, progress: Progress | None = None) -> ReplayResult:
        sim = self.sim
        start = wall.perf_counter()
        last_tick_gen = -1
        events = 0
        while True:
            now = sim.clock.now()
            while self.heap and self.heap[0][0] <= now:
                _, kind, _, payload = heapq.heappop(self.heap)
                self._dispatch(kind, payload)
                events += 1
                if progress is not None and events % PROGRESS_EVERY == 0:
                    progress(self.arrived, self.total, now)
            self._drain()
            self.metrics.sample(now, self._pending())
            t = self._next_time(last_tick_gen)
            if t is None:
                break
            if t > now:
                sim.clock.advance_to(t)
            if sim.queue.is_leftover_flush_tick(sim.clock.now()):
                last_tick_gen = sim.generation
            sim.queue.run_periodic_flushes()
            sim.sched.process_waiting()
            sim._done_with_finished()
        if progress is not None:
            progress(self.arrived, self.total, sim.clock.now())
        return ReplayResult(sorted(self.records.values(), key=lambda r: (r.arrival, r.pod)),
                            self.metrics.series, sim.clock.now(), wall.perf_counter() - start,
                            self.attempts, len(sim.cluster.nodes))

    def _pending(self) -> int:
        return self.sim.queue.pending()


def replay(manifest: Manifest, entries: Sequence[TraceEntry], opts: RunOptions,
           progress: Progress | None = None) -> ReplayResult:
    return Replay(manifest, entries, opts).run(progress)
