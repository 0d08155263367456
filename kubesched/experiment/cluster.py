"""The cluster of a fill experiment as NumPy columns: one row per node.

Free milli per GPU is a (nodes x 8) matrix padded with zeros (a padded GPU never fits a
GPU request and adds nothing to a sum), so every policy scores all candidate nodes with a
few array operations. :meth:`Cluster.node` gives one row as the per-node
:class:`~kubesched.contrib.gpushare.model.NodeGpus` the scheduling plugins use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.contrib.gpushare.frag import FragTable, TypicalShape
from kubesched.contrib.gpushare.model import MILLI, GpuRequest, NodeGpus, model_allowed
from kubesched.experiment.openb import TraceNode, TracePod

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PodRow:
    """A pod as the engine uses it: requests, allowed-model row and GPU kind column."""

    cpu: int
    memory: int
    gpu: GpuRequest
    allowed: npt.NDArray[np.bool_]  # by model id
    kind: int  # column in Cluster.kinds, -1 for CPU-only pods


class Cluster:
    def __init__(self, nodes: Sequence[TraceNode], typical: Sequence[TypicalShape]) -> None:
        self.names = [n.name for n in nodes]
        self.models = sorted({n.model for n in nodes})
        width = max([1] + [n.gpus for n in nodes])
        self.cpu_left: I64 = np.array([n.cpu for n in nodes], dtype=np.int64)
        self.mem_left: I64 = np.array([n.memory for n in nodes], dtype=np.int64)
        self.gpu_count: I64 = np.array([n.gpus for n in nodes], dtype=np.int64)
        self.free: I64 = np.zeros((len(nodes), width), dtype=np.int64)
        for i, n in enumerate(nodes):
            self.free[i, :n.gpus] = MILLI
        self.model_id = np.array([self.models.index(n.model) for n in nodes], dtype=np.intp)
        self.left: I64 = self.free.sum(axis=1)
        self.kind_names: list[str] = []
        self.kinds: I64 = np.zeros((len(nodes), 0), dtype=np.int64)
        self.n_kinds: I64 = np.zeros(len(nodes), dtype=np.int64)
        self.table = FragTable(typical, self.models)
        self.frag = self.table.frag_rows(self.cpu_left, self.free, self.model_id)
        self.total_gpus = int(self.gpu_count.sum())
        self.used_milli = 0
        self._allowed: dict[tuple[str, ...], npt.NDArray[np.bool_]] = {}

    def pod_row(self, pod: TracePod) -> PodRow:
        g = pod.gpu
        allowed = self._allowed.get(g.models)
        if allowed is None:
            allowed = np.array([model_allowed(m, g.models) for m in self.models], dtype=bool)
            self._allowed[g.models] = allowed
        kind = -1
        if g.wants_gpu:
            if g.affinity not in self.kind_names:
                self.kind_names.append(g.affinity)
                self.kinds = np.hstack([self.kinds, np.zeros((len(self.names), 1), dtype=np.int64)])
            kind = self.kind_names.index(g.affinity)
        return PodRow(pod.cpu, pod.memory, g, allowed, kind)

    def candidates(self, pod: PodRow) -> npt.NDArray[np.intp]:
        """The nodes passing NodeResourcesFit (CPU, memory) and open-gpu-share's Filter."""
        mask = (self.cpu_left >= pod.cpu) & (self.mem_left >= pod.memory)
        g = pod.gpu
        if g.wants_gpu:
            mask &= pod.allowed[self.model_id]
            mask &= (self.free >= g.milli).sum(axis=1) >= g.count
        return np.flatnonzero(mask)

    def node(self, i: int) -> NodeGpus:
        kinds = {name: int(self.kinds[i, k]) for k, name in enumerate(self.kind_names) if self.kinds[i, k] > 0}
        free = [int(f) for f in self.free[i, :self.gpu_count[i]]]
        return NodeGpus(self.models[self.model_id[i]], free, int(self.cpu_left[i]), kinds)

    def place(self, i: int, pod: PodRow, gpus: Sequence[int]) -> None:
        g = pod.gpu
        self.cpu_left[i] -= pod.cpu
        self.mem_left[i] -= pod.memory
        if g.wants_gpu:
            for j in gpus:
                self.free[i, j] -= g.milli
            self.left[i] -= g.milli * len(gpus)
            self.used_milli += g.milli * len(gpus)
            self.kinds[i, pod.kind] += 1
            self.n_kinds[i] = int((self.kinds[i] > 0).sum())
        row = slice(i, i + 1)
        self.frag[i] = self.table.frag_rows(self.cpu_left[row], self.free[row], self.model_id[row])[0]
