"""What the resource scorers score: per resource, the node's allocatable and its requested
amount including the incoming pod (upstream ``resource_allocation.go``).

Shared by NodeResourcesFit's strategies and NodeResourcesBalancedAllocation. The rules:

- cpu/memory: Fit uses the *non-zero* requests (a container without a request counts as
  100m / 200Mi) of the node's pods and of the incoming pod; BalancedAllocation
  (``use_requested``) uses the real requests of both.
- ephemeral-storage and scalar resources: always the real requests.
- a scalar (extended, hugepages, ...) resource the pod does not request, a resource the
  node lacks, or any other name is left out of the score: (allocatable, requested) = (0, 0),
  and every scorer skips resources whose allocatable is 0.

A scorer sees per resource ``requested`` and ``allocatable`` lists (``score_one``) or
NumPy columns over nodes (``score_many``); both forms return the same int64 scores.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.noderesources.args import ResourceSpec

log = logging.getLogger(__name__)

I64 = np.int64


class Scorer(Protocol):
    """Turns per-resource (requested, allocatable) into a node score."""

    def score_one(self, requested: Sequence[int], allocatable: Sequence[int]) -> int: ...

    def score_many(self, requested: Sequence[np.ndarray], allocatable: Sequence[np.ndarray]) -> np.ndarray: ...


class ResourceAllocationScorer:
    """Computes the inputs of a :class:`Scorer` for one set of resources."""

    __slots__ = ("name", "resources", "names", "scorer", "use_requested")

    def __init__(self, name: str, resources: Sequence[ResourceSpec], scorer: Scorer,
                 use_requested: bool) -> None:
        self.name = name
        self.resources = tuple(resources)
        self.names = tuple(r.name for r in self.resources)
        self.scorer = scorer
        self.use_requested = use_requested

    # -- the incoming pod ---------------------------------------------------------------
    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """``calculatePodResourceRequestList``: the pod's request of each resource."""
        return tuple(self._pod_request(pod, n) for n in self.names)

    def _pod_request(self, pod: Pod, name: str) -> int:
        if not self.use_requested:
            if name == CPU:
                return pod.non0_cpu
            if name == MEMORY:
                return pod.non0_mem
        return pod.requests.get(name, 0)

    # -- per node -----------------------------------------------------------------------
    def _alloc_request(self, ni: NodeInfo, name: str, pod_request: int) -> tuple[int, int]:
        """``calculateResourceAllocatableRequest``: (allocatable, requested incl. the pod)."""
        scalar = is_scalar_resource_name(name)
        if pod_request == 0 and scalar:
            return 0, 0
        alloc = ni.allocatable
        if name == CPU:
            used = ni.requested.get(CPU, 0) if self.use_requested else ni.non0_cpu
            return alloc.get(CPU, 0), used + pod_request
        if name == MEMORY:
            used = ni.requested.get(MEMORY, 0) if self.use_requested else ni.non0_mem
            return alloc.get(MEMORY, 0), used + pod_request
        if name == EPHEMERAL_STORAGE:
            return alloc.get(EPHEMERAL_STORAGE, 0), ni.requested.get(EPHEMERAL_STORAGE, 0) + pod_request
        if scalar and name in alloc:
            return alloc[name], ni.requested.get(name, 0) + pod_request
        return 0, 0

    def score(self, ni: NodeInfo, pod_requests: Sequence[int]) -> int:
        if not self.resources:
            raise ValueError("resources not found")
        n = len(self.names)
        requested = [0] * n
        allocatable = [0] * n
        for i, name in enumerate(self.names):
            alloc, req = self._alloc_request(ni, name, pod_requests[i])
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
        score = self.scorer.score_one(requested, allocatable)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s: node %s allocatable %s requested %s score %d",
                      self.name, ni.name, allocatable, requested, score)
        return score

    # -- batch --------------------------------------------------------------------------
    def _columns(self, table: NodeTable, idx: np.ndarray, name: str,
                 pod_request: int) -> tuple[np.ndarray, np.ndarray] | None:
        scalar = is_scalar_resource_name(name)
        if pod_request == 0 and scalar:
            return None
        if name == CPU or name == MEMORY:
            if self.use_requested:
                used = table.requested(name)[idx]
            else:
                used = (table.non0_cpu if name == CPU else table.non0_mem)[idx]
            return table.allocatable(name)[idx], used + pod_request
        if name == EPHEMERAL_STORAGE or scalar:
            alloc = table.alloc.get(name)
            if alloc is None:
                return None
            req = table.req.get(name)
            used = req[idx] if req is not None else np.zeros(idx.size, I64)
            return alloc[idx], used + pod_request
        return None

    def score_nodes(self, table: NodeTable, idx: np.ndarray, pod_requests: Sequence[int]) -> np.ndarray:
        if not self.resources:
            raise ValueError("resources not found")
        zeros = np.zeros(idx.size, I64)
        requested: list[np.ndarray] = []
        allocatable: list[np.ndarray] = []
        for i, name in enumerate(self.names):
            cols = self._columns(table, idx, name, pod_requests[i])
            if cols is None:
                requested.append(zeros)
                allocatable.append(zeros)
                continue
            alloc, req = cols
            requested.append((req if alloc.size and alloc.min() > 0 else np.where(alloc != 0, req, 0)).astype(I64, copy=False))
            allocatable.append(alloc.astype(I64, copy=False))
        return self.scorer.score_many(requested, allocatable)
