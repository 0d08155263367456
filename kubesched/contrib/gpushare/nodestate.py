"""Which GPUs of a node are taken, from the pods on it.

A pod's GPUs are those GpuShare reserved for it in this scheduler (the :class:`Ledger`,
kept from Reserve to Unreserve) or, for pods placed elsewhere, its ``gpu-index``
annotation. A GPU pod with neither (bound by another scheduler without the annotation) is
counted on the tightest GPUs, as the artifact's simulator does for pods without indices.

The ledger is shared by the plugins of one scheduler profile (looked up by its handle), so
the score plugins see the GPUs GpuShare gave out.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.contrib.gpushare.frag import Shape, TypicalShape, node_frag, typical_shapes
from kubesched.contrib.gpushare.model import (GPU_COUNT, GPU_INDEX, GPU_MODEL, GpuRequest, GpuRequestError,
                                              NodeGpus, packed, parse_indices, parse_request)
from kubesched.framework.types import NodeInfo


class Ledger:
    """GPUs reserved per pod uid, and per-node GPU state cached by NodeInfo generation."""

    def __init__(self) -> None:
        self.reserved: dict[str, tuple[str, tuple[int, ...]]] = {}  # pod uid -> (node, GPUs)
        self._nodes: dict[str, tuple[int, int, NodeGpus]] = {}
        self._versions: dict[str, int] = {}  # node -> bumped by every reserve/unreserve there
        self.target: list[TypicalShape] | None = None
        self._frag: dict[tuple[int, tuple[int, ...], str], float] = {}

    def frag(self, cpu_left: int, free: Sequence[int], model: str) -> float:
        """:func:`node_frag` over the target workload, memoised by node state (the multiset
        of free milli decides it, as the artifact's ``fragMemo`` keys it)."""
        key = (cpu_left, tuple(sorted(free)), model)
        got = self._frag.get(key)
        if got is None:
            assert self.target is not None
            got = self._frag[key] = node_frag(cpu_left, free, model, self.target)
        return got

    def target_workload(self, handle: Any, popularity: int) -> list[TypicalShape]:
        """FGD's target workload: the typical shapes of every pod the scheduler knows when
        first asked (bound or pending), as the artifact takes its trace's pods."""
        if self.target is None:
            shapes = []
            for p in handle.objects.all_pods():
                try:
                    shapes.append(Shape(p.non0_cpu, pod_request(p)))
                except GpuRequestError:
                    continue
            self.target = typical_shapes(shapes, popularity)
        return self.target

    def reserve(self, pod: Pod, node: str, gpus: tuple[int, ...]) -> None:
        self.reserved[pod.uid] = (node, gpus)
        self._versions[node] = self._versions.get(node, 0) + 1

    def unreserve(self, pod: Pod) -> None:
        got = self.reserved.pop(pod.uid, None)
        if got is not None:
            self._versions[got[0]] = self._versions.get(got[0], 0) + 1

    def node(self, ni: NodeInfo) -> NodeGpus:
        """The node's GPU state (cached until the node or a reservation on it changes)."""
        version = self._versions.get(ni.name, 0)
        hit = self._nodes.get(ni.name)
        if hit is not None and hit[0] == ni.generation and hit[1] == version:
            return hit[2]
        state = self._build(ni)
        self._nodes[ni.name] = (ni.generation, version, state)
        return state

    def _build(self, ni: NodeInfo) -> NodeGpus:
        node = ni.node
        assert node is not None
        count = int(node.allocatable.get(GPU_COUNT, 0))
        free = [1000] * count
        kinds: dict[str, int] = {}
        for p in ni.pods:
            req = pod_request(p)
            if not req.wants_gpu:
                continue
            kinds[req.affinity] = kinds.get(req.affinity, 0) + 1
            for i in self._gpus_of(p, req, free):
                free[i] -= req.milli
        cpu_left = int(node.allocatable.get("cpu", 0)) - int(ni.requested.get("cpu", 0))
        return NodeGpus(node.labels.get(GPU_MODEL, ""), free, cpu_left, kinds)

    def _gpus_of(self, p: Pod, req: GpuRequest, free: list[int]) -> tuple[int, ...]:
        got = self.reserved.get(p.uid)
        if got is not None and got[0] == p.node_name:
            return got[1]
        raw = p.annotations.get(GPU_INDEX)
        if raw:
            try:
                return parse_indices(raw, len(free))
            except GpuRequestError:
                pass
        after = packed(free, req)
        if after is None:
            return ()
        return tuple(i for i, (a, b) in enumerate(zip(free, after)) if a != b)


_LEDGERS: "weakref.WeakKeyDictionary[Any, Ledger]" = weakref.WeakKeyDictionary()


def ledger_for(handle: Any) -> Ledger:
    """The ledger of the profile behind ``handle`` (one per handle)."""
    led = _LEDGERS.get(handle)
    if led is None:
        led = _LEDGERS[handle] = Ledger()
    return led


def pod_request(p: Pod) -> GpuRequest:
    """The pod's GPU request (GpuRequestError if its annotations are malformed)."""
    return parse_request(p.annotations)
