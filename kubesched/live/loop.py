"""The live scheduling loop: pop, schedule, and upstream's timers, on real time.

One thread runs :meth:`SchedulingLoop.run`. Each turn it holds the scheduler's lock while
it runs the timers that are due and one scheduling cycle (so informer handlers and
binding threads never see a half-done cycle); with nothing to schedule it sleeps on a
condition that event handlers signal (:meth:`wake`) or until the next timer:

* ``flushBackoffQCompleted`` every second, ``flushUnschedulablePodsLeftover`` every 30 s
  (upstream's periods);
* Permit waits: ``process_waiting`` whenever something may have resolved one, and at the
  earliest Permit deadline;
* assumed pods whose binding never showed up: ``cache.cleanup_expired`` every second
  (upstream's ``cleanupAssumedPodsPeriod``).

``may_decide`` (``kubesched run`` with leader election: the lease is provably ours) is
asked before each pop: while it says no the loop pops nothing, so a replica thawed after
a long pause does not start cycles whose decisions its fence would refuse anyway.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from kubesched.api.objects import Pod

from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.explanation.store import ExplainStore
from kubesched.framework.interface import QueuedPodInfo
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.explanation.attempt import Attempt
from kubesched.scheduler.scheduler import Scheduler

log = logging.getLogger(__name__)

BACKOFF_FLUSH_PERIOD = 1.0
LEFTOVER_FLUSH_PERIOD = 30.0
CLEANUP_ASSUMED_PERIOD = 1.0


class SchedulingLoop:
    def __init__(self, sched: Scheduler, queue: SchedulingQueue, handlers: EventHandlers,
                 now: Callable[[], float], after_cycle: Callable[[], None] | None = None,
                 store: ExplainStore | None = None, may_decide: Callable[[], bool] | None = None) -> None:
        """``store``: where attempts are kept for explain (default: the default bounds)."""
        self.sched = sched
        self.may_decide = may_decide
        self.queue = queue
        self.handlers = handlers
        self.now = now
        self.after_cycle = after_cycle
        self.store = store if store is not None else ExplainStore()  # pod key -> its last attempts
        # called (under the scheduler's lock) after each scheduling cycle with the pod, its
        # Attempt and the cycle's duration in seconds: for metrics. A binding cycle goes on
        # in another thread; its outcome lands in the same Attempt (result Scheduled/Error).
        self.attempt_hooks: list[Callable[[Pod, Attempt, float], None]] = []
        self.cycles = 0
        self.stopping = threading.Event()
        self._cond = threading.Condition()
        self._woken = False
        t = now()
        self._next_backoff = t + BACKOFF_FLUSH_PERIOD
        self._next_leftover = t + LEFTOVER_FLUSH_PERIOD
        self._next_cleanup = t + CLEANUP_ASSUMED_PERIOD

    def wake(self) -> None:
        """Something changed: look for work now (called by handlers and binding threads).
        Already woken and not yet running a turn: that turn will see the change, made
        before this call, so a burst of events costs one notify, not one each."""
        if self._woken:
            return
        with self._cond:
            self._woken = True
            self._cond.notify()

    def stop(self) -> None:
        self.stopping.set()
        self.wake()

    def run(self) -> None:
        while not self.stopping.is_set():
            with self._cond:
                self._woken = False
            try:
                worked = self.turn()
            except Exception:  # noqa: BLE001 - the loop must go on (upstream: HandleCrash)
                log.exception("scheduling loop")
                worked = False
            if not worked:
                self._sleep()

    def turn(self) -> bool:
        """Run due timers and at most one scheduling cycle; True if a pod was popped."""
        with self.sched.lock:
            self._timers()
            if self.stopping.is_set() or (self.may_decide is not None and not self.may_decide()):
                return False
            qpi = self.queue.pop()
            if qpi is not None:
                self._schedule(qpi)
        if self.after_cycle is not None:
            self.after_cycle()
        return qpi is not None

    def _schedule(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        if pod.scheduler_name not in self.sched.profiles or self.handlers.skip_pod_schedule(pod):
            self.queue.done(pod.uid)
            return
        self.cycles += 1
        started = time.perf_counter()
        att = self.sched.schedule_one(qpi)
        elapsed = time.perf_counter() - started
        for hook in self.attempt_hooks:
            try:
                hook(pod, att, elapsed)
            except Exception:  # noqa: BLE001 - an observer's bug must not stop scheduling
                log.exception("attempt hook failed")
        self.store.add_attempt(pod.key, att)
        if len(self.sched.waiting):
            self.sched.process_waiting()  # a Permit plugin may have allowed waiting pods

    def _timers(self) -> None:
        now = self.now()
        if now >= self._next_backoff:
            self.queue.flush_backoff_q_completed()
            self._next_backoff = now + BACKOFF_FLUSH_PERIOD
        if now >= self._next_leftover:
            self.queue.flush_unschedulable_pods_leftover()
            self._next_leftover = now + LEFTOVER_FLUSH_PERIOD
        if now >= self._next_cleanup:
            self.sched.cache.cleanup_expired(now)
            self._next_cleanup = now + CLEANUP_ASSUMED_PERIOD
        if len(self.sched.waiting):
            self.sched.process_waiting()

    def _sleep(self) -> None:
        with self.sched.lock:
            deadline = self.sched.waiting.next_deadline()
        due = min(self._next_backoff, self._next_leftover, self._next_cleanup)
        if deadline is not None:
            due = min(due, deadline)
        timeout = max(0.0, min(due - self.now(), BACKOFF_FLUSH_PERIOD))
        with self._cond:
            if not self._woken and not self.stopping.is_set():
                self._cond.wait(timeout)

    def last_attempt(self, key: str) -> Attempt | None:
        return self.store.last(key)
