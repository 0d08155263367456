"""The unschedulable pool: pods that were tried and rejected, and pods a PreEnqueue plugin
gates (upstream ``unschedulablePods``; a gated pod is one whose ``gating_plugin`` is set).

They wait here until an event one of their rejecting (or gating) plugins registered says
they may now fit, or, for rejected pods, until they have waited
``podMaxInUnschedulablePodsDuration`` (:meth:`SchedulingQueue.flush_unschedulable_pods_leftover`).
"""

from __future__ import annotations

from collections.abc import Iterator

from kubesched.api.objects import Pod
from kubesched.framework.interface import QueuedPodInfo


class UnschedulablePods:
    def __init__(self) -> None:
        self.pods: dict[str, QueuedPodInfo] = {}  # pod key -> info

    def add_or_update(self, qpi: QueuedPodInfo) -> None:
        self.pods[qpi.pod.key] = qpi

    def delete(self, pod: Pod) -> None:
        self.pods.pop(pod.key, None)

    def get(self, pod: Pod) -> QueuedPodInfo | None:
        return self.pods.get(pod.key)

    def values(self) -> list[QueuedPodInfo]:
        return list(self.pods.values())

    def __len__(self) -> int:
        return len(self.pods)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter(list(self.pods.values()))
