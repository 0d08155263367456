"""The timeline of a simulation (``kubesched simulate --timeline``): what happened to each
pod, when, on the virtual clock.

Entries are plain dicts, in the order things happened: ``{"time", "pod", "event", ...}``.

    move       the pod changed queue: ``from``/``to`` (new, activeQ, backoffQ,
               unschedulable, gated, inFlight, deleted) and the ``trigger`` (a cluster event
               label such as AssignedPodAdd, or ScheduleAttemptFailure, BackoffComplete,
               PopFromBackoffQ, UnschedulableTimeout); entering backoffQ adds
               ``backoffExpiration`` (the pod leaves backoff after that window)
    attempt    a scheduling attempt: ``attempt`` (its number), ``from`` (activeQ or
               backoffQ), ``result``, ``node``, ``message``, and for a preemption
               ``nominatedNode`` and ``victims``
    bind       the pod was bound to ``node``
    deleted    the pod was deleted (``message``: e.g. preempted by whom)
"""

from __future__ import annotations

import math
from typing import Any

from kubesched.api.objects import Pod
from kubesched.queue.moves import IN_FLIGHT, QueueMove
from kubesched.explanation.attempt import Attempt


def _t(x: float) -> float:
    return round(x, 9)


class Timeline:
    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.entries: list[dict[str, Any]] = []
        self._open: dict[str, dict[str, Any]] = {}  # pod key -> its attempt being run

    def _add(self, time: float, pod: str, event: str, **extra: Any) -> dict[str, Any]:
        e: dict[str, Any] = {"time": _t(time), "pod": pod, "event": event}
        e.update(extra)
        self.entries.append(e)
        return e

    def on_move(self, m: QueueMove) -> None:
        """A queue move; a pop opens the pod's attempt entry (filled by :meth:`attempt`)."""
        if not self.enabled:
            return
        if m.dst == IN_FLIGHT:
            self._open[m.pod] = self._add(m.time, m.pod, "attempt", **{"from": m.src})
            return
        extra: dict[str, Any] = {"from": m.src, "to": m.dst, "trigger": m.event}
        if m.backoff_expiration is not None:
            exp = m.backoff_expiration
            extra["backoffExpiration"] = None if exp == -math.inf else _t(exp)
        self._add(m.time, m.pod, "move", **extra)

    def attempt(self, time: float, pod: Pod, att: Attempt, number: int) -> None:
        if not self.enabled:
            return
        e = self._open.pop(pod.key, None)
        if e is None:  # not popped from the queue (single pass)
            e = self._add(time, pod.key, "attempt")
        e.update({"attempt": number, "result": att.result, "node": att.chosen, "message": att.message})
        if att.nominated_node:
            e.update({"nominatedNode": att.nominated_node, "victims": list(att.victims)})

    def bind(self, time: float, pod: Pod) -> None:
        if self.enabled:
            self._add(time, pod.key, "bind", node=pod.node_name)

    def deleted(self, time: float, pod: Pod, message: str) -> None:
        if self.enabled:
            self._add(time, pod.key, "deleted", message=message)
