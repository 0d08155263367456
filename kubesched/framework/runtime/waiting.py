"""Pods waiting at Permit (upstream ``runtime/waiting_pods_map.go``).

A Permit plugin that returns ``Wait`` parks the pod here with a timeout. Any plugin may
later ``allow`` it (when every waiting plugin has allowed, the binding cycle goes on) or
``reject`` it (the pod is unreserved, forgotten and sent back to the queue). A pod whose
timeout passes is rejected by the plugin that timed out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.status import Code, Status


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for the durations Permit uses (``10s``, ``1m30s``, ``500ms``)."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return f"{ns / size:g}{unit}"
    h, rem = divmod(ns, 3_600_000_000_000)
    m, rem = divmod(rem, 60_000_000_000)
    s = f"{rem / 1e9:.9f}".rstrip("0").rstrip(".")
    if h:
        return f"{h}h{m}m{s}s"
    if m:
        return f"{m}m{s}s"
    return f"{s}s"


@dataclass(eq=False)
class WaitingPod:
    pod: Pod
    node_name: str
    deadlines: dict[str, float]  # plugin -> absolute deadline, for plugins not yet allowed
    context: Any = None  # the scheduler's binding-cycle context (state, framework, queue entry)
    result: Status | None = field(default=None)

    @property
    def pending_plugins(self) -> list[str]:
        return sorted(self.deadlines)

    @property
    def done(self) -> bool:
        return self.result is not None

    def allow(self, plugin: str) -> None:
        """``plugin`` allows the pod; once all have, the result is Success."""
        if self.result is not None:
            return
        self.deadlines.pop(plugin, None)
        if not self.deadlines:
            self.result = Status(Code.Success)

    def reject(self, plugin: str, message: str) -> None:
        if self.result is None:
            self.result = Status(Code.Unschedulable, (message,), plugin)

    waits: dict[str, float] = field(default_factory=dict)  # plugin -> wait time asked for

    def expire(self, now: float) -> None:
        """Reject the pod if a waiting plugin's timeout has passed."""
        for plugin, deadline in sorted(self.deadlines.items(), key=lambda kv: kv[1]):
            if now >= deadline:
                wait = go_duration(self.waits.get(plugin, 0.0))
                self.reject(plugin, f"rejected due to timeout after waiting {wait} at plugin {plugin}")
                return

    def next_deadline(self) -> float | None:
        return min(self.deadlines.values()) if self.deadlines and self.result is None else None


class WaitingPods:
    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.pod.uid] = wp

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def next_deadline(self) -> float | None:
        ds = [d for wp in self._pods.values() if (d := wp.next_deadline()) is not None]
        return min(ds) if ds else None
