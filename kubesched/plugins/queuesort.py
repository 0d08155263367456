"""PrioritySort: the activeQ order, higher priority first, then earlier queue timestamp
(upstream ``queuesort/priority_sort.go``)."""

from __future__ import annotations

from typing import Any

from kubesched.framework.interface import QueuedPodInfo
from kubesched.plugins import names


class PrioritySort:
    name = names.PRIORITY_SORT

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, p: QueuedPodInfo) -> tuple[int, float, int]:
        # the pod's arrival sequence breaks exact timestamp ties deterministically
        return (-p.pod.priority, p.timestamp, p.pod.seq)
