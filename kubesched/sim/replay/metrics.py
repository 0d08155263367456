"""The metrics of a replay over time, kept incrementally (a bind or a deletion updates one
node), so sampling after every event costs a few NumPy operations, not a pass over pods.

Each sample (one per virtual time at which something happened, taken once the queue has
nothing more to pop) holds:

``time``            virtual seconds
``pending``         pods waiting in the scheduling queue (activeQ, backoffQ, unschedulable)
``running``         pods bound to a node
``cpu``/``memory``  utilisation: requested / allocatable, summed over all nodes (0..1)
``fragmentation``   the share of the free cpu that sits on nodes that cannot fit the
                    median pod of the trace (its cpu and memory requests): free room
                    stranded in pieces too small to use
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.api.objects import Node, Pod


def _median(values: list[int]) -> int:
    if not values:
        return 0
    s = sorted(values)
    return s[(len(s) - 1) // 2]  # the lower median: a request some pod really made


class Metrics:
    def __init__(self, nodes: Sequence[Node], pods: Sequence[Pod]) -> None:
        self.index = {n.name: i for i, n in enumerate(nodes)}
        self.alloc_cpu = np.array([n.allocatable.get("cpu", 0) for n in nodes], dtype=np.int64)
        self.alloc_mem = np.array([n.allocatable.get("memory", 0) for n in nodes], dtype=np.int64)
        self.req_cpu = np.zeros(len(nodes), dtype=np.int64)
        self.req_mem = np.zeros(len(nodes), dtype=np.int64)
        self.total_cpu = int(self.alloc_cpu.sum())
        self.total_mem = int(self.alloc_mem.sum())
        self.median_cpu = _median([p.requests.get("cpu", 0) for p in pods])
        self.median_mem = _median([p.requests.get("memory", 0) for p in pods])
        self.running = 0
        self.series: list[dict[str, float]] = []

    def add_node(self, node: Node) -> None:
        """A node that joins during the replay (a recording's); one that was there keeps its row."""
        if node.name in self.index:
            i = self.index[node.name]
            self.total_cpu -= int(self.alloc_cpu[i])
            self.total_mem -= int(self.alloc_mem[i])
            self.alloc_cpu[i] = node.allocatable.get("cpu", 0)
            self.alloc_mem[i] = node.allocatable.get("memory", 0)
        else:
            self.index[node.name] = len(self.alloc_cpu)
            self.alloc_cpu = np.append(self.alloc_cpu, node.allocatable.get("cpu", 0))
            self.alloc_mem = np.append(self.alloc_mem, node.allocatable.get("memory", 0))
            self.req_cpu = np.append(self.req_cpu, 0)
            self.req_mem = np.append(self.req_mem, 0)
        self.total_cpu += node.allocatable.get("cpu", 0)
        self.total_mem += node.allocatable.get("memory", 0)

    def remove_node(self, name: str) -> None:
        """A node that leaves: no allocatable from now on (its pods are deleted on their own)."""
        i = self.index.get(name)
        if i is not None:
            self.total_cpu -= int(self.alloc_cpu[i])
            self.total_mem -= int(self.alloc_mem[i])
            self.alloc_cpu[i] = self.alloc_mem[i] = 0

    def _add(self, pod: Pod, sign: int) -> None:
        i = self.index.get(pod.node_name)
        if i is None:
            return
        self.req_cpu[i] += sign * pod.requests.get("cpu", 0)
        self.req_mem[i] += sign * pod.requests.get("memory", 0)
        self.running += sign

    def bound(self, pod: Pod) -> None:
        self._add(pod, 1)

    def unbound(self, pod: Pod) -> None:
        self._add(pod, -1)

    def fragmentation(self) -> float:
        free_cpu = np.maximum(self.alloc_cpu - self.req_cpu, 0)
        free_mem = np.maximum(self.alloc_mem - self.req_mem, 0)
        total = int(free_cpu.sum())
        if total == 0:
            return 0.0
        stranded = (free_cpu < self.median_cpu) | (free_mem < self.median_mem)
        return int(free_cpu[stranded].sum()) / total

    def sample(self, time: float, pending: int) -> None:
        s = {"time": round(time, 9), "pending": float(pending), "running": float(self.running),
             "cpu": int(self.req_cpu.sum()) / self.total_cpu if self.total_cpu else 0.0,
             "memory": int(self.req_mem.sum()) / self.total_mem if self.total_mem else 0.0,
             "fragmentation": self.fragmentation()}
        if self.series and self.series[-1]["time"] == s["time"]:
            self.series[-1] = s
        else:
            self.series.append(s)
