"""Every blocker and the verified fixes of a pending pod, asked of a running scheduler
(``serve``'s and ``run``'s ``/debug/explain``).

Both are computed on the scheduler's own cache, under its lock (so between two scheduling
cycles, never inside one), and only when someone asks:

- ``blockers`` are added to the explain document of a pod whose last attempt failed and
  which is still pending; they are computed once per attempt (the document of the same
  attempt asked again reuses them), so a page refreshing every second costs the loop one
  computation per attempt, about 0.3 s at 5,000 nodes; the document lists the 200 blocked
  nodes closest to fitting (fewest blockers) and counts the others;
- ``fixes`` (``?fixes=N``) run the fix search, which holds the loop for its duration
  (seconds on thousands of nodes): it is asked for explicitly, by a person.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.policy import PriorityClass
from kubesched.explanation.fixes import find_fixes
from kubesched.scheduler.scheduler import Scheduler
from kubesched.scheduler.whatif import SchedulerWhatIf

FAILED = ("Unschedulable", "Error")
MAX_FIX_LIMIT = 20
NODES_LISTED = 200  # blocked nodes in a document (the closest to fitting); `explain -f -o json` lists all


class LiveWhatIf:
    def __init__(self, sched: Scheduler, pod: Callable[[str, str], Pod | None],
                 priority_classes: Callable[[], list[PriorityClass]]) -> None:
        self.sched = sched
        self.pod = pod
        self.priority_classes = priority_classes
        self._lock = threading.Lock()
        self._blockers: dict[str, tuple[str, Any, dict[str, Any]]] = {}  # pod key -> (uid, attempt, doc)

    def _pending(self, namespace: str, name: str) -> Pod | None:
        pod = self.pod(namespace, name)
        if pod is None or pod.node_name or pod.scheduler_name not in self.sched.profiles:
            return None
        return dataclasses.replace(pod, nominated_node_name="")

    def add_blockers(self, doc: dict[str, Any]) -> None:
        """``doc`` (an explain document) with ``blockers`` when its pod is still pending."""
        if doc.get("result") not in FAILED:
            return
        ns, _, name = str(doc.get("pod", "")).partition("/")
        pod = self._pending(ns, name)
        if pod is None:
            return
        key, attempt = pod.key, doc.get("attemptsTotal")
        with self._lock:
            got = self._blockers.get(key)
        if got is not None and got[0] == pod.uid and got[1] == attempt:
            doc["blockers"] = got[2]
            return
        with self.sched.lock:
            found = SchedulerWhatIf(self.sched).blockers(pod).to_json(max_nodes=NODES_LISTED)
        with self._lock:
            self._blockers[key] = (pod.uid, attempt, found)
            if len(self._blockers) > 100:  # a bounded memo: the oldest entries go
                self._blockers.pop(next(iter(self._blockers)))
        doc["blockers"] = found

    def fixes(self, namespace: str, name: str, limit: int) -> dict[str, Any] | None:
        """The fix search's document for a pending pod (None: not pending here)."""
        pod = self._pending(namespace, name)
        if pod is None:
            return None
        with self.sched.lock:
            world = SchedulerWhatIf(self.sched, self.priority_classes())
            report = find_fixes(world, pod, max(1, min(limit, MAX_FIX_LIMIT)))
        doc = report.to_json()
        doc["dryCycles"] = world.cycles
        doc["blockers"] = report.blockers.to_json(max_nodes=NODES_LISTED)
        return doc
