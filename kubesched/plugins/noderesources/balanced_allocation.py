"""NodeResourcesBalancedAllocation: favours nodes whose resources would be used in balance
(upstream ``noderesources/balanced_allocation.go``).

Per node, the fraction ``requested / allocatable`` (capped at 1, real requests incl. the
pod) of each configured resource the node has; the score is ``(1 - std) * 100`` truncated
to int64, where std is ``|f0 - f1| / 2`` for two fractions and the population standard
deviation for more, computed in float64 in upstream's order. PreScore returns Skip for a
pod that requests none of the resources (a best-effort pod), so such pods are not scored
by this plugin at all.
"""

from __future__ import annotations

from collections.abc import Hashable

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.rowclasses import map_classes
from kubesched.framework.status import SKIP, SUCCESS, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs, parse_balanced_allocation_args,
)
from kubesched.plugins.helper.gomath import I64
from kubesched.plugins.noderesources.resource_allocation import ResourceAllocationScorer

log = logging.getLogger(__name__)


class BalancedScorer:
    """``balancedResourceScorer`` (weights are validated to be 1 and do not enter)."""

    __slots__ = ()

    def score_one(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        fractions: list[float] = []
        total = 0.0
        for req, alloc in zip(requested, allocatable):
            if alloc == 0:
                continue
            f = min(float(req) / float(alloc), 1.0)
            total += f
            fractions.append(f)
        std = 0.0
        if len(fractions) == 2:
            std = abs((fractions[0] - fractions[1]) / 2)
        elif len(fractions) > 2:
            mean = total / float(len(fractions))
            acc = 0.0
            for f in fractions:
                acc = acc + (f - mean) * (f - mean)
            std = math.sqrt(acc / float(len(fractions)))
        return int((1 - std) * float(MAX_NODE_SCORE))

    def score_many(self, requested: Sequence[np.ndarray], allocatable: Sequence[np.ndarray]) -> np.ndarray:
        n = requested[0].size
        if n and len(requested) == 2 and allocatable[0].min() > 0 and allocatable[1].min() > 0:
            # the common case: two resources every node has; the same float64 operations
            f0 = requested[0].astype(np.float64) / allocatable[0].astype(np.float64)
            f1 = requested[1].astype(np.float64) / allocatable[1].astype(np.float64)
            np.minimum(f0, 1.0, out=f0)
            np.minimum(f1, 1.0, out=f1)
            f0 -= f1
            f0 /= 2
            np.abs(f0, out=f0)
            return ((1 - f0) * float(MAX_NODE_SCORE)).astype(I64)
        count = np.zeros(n, I64)
        total = np.zeros(n, np.float64)
        first = np.zeros(n, np.float64)
        second = np.zeros(n, np.float64)
        fracs: list[tuple[np.ndarray, np.ndarray]] = []
        for req, alloc in zip(requested, allocatable):
            has = alloc != 0
            f = req.astype(np.float64) / np.where(has, alloc, 1).astype(np.float64)
            f = np.where(f > 1, 1.0, f)
            total = np.where(has, total + f, total)
            first = np.where(has & (count == 0), f, first)
            second = np.where(has & (count == 1), f, second)
            count += has
            fracs.append((has, f))
        std = np.zeros(n, np.float64)
        two = count == 2
        std = np.where(two, np.abs((first - second) / 2), std)
        many = count > 2
        if many.any():
            cnt = np.where(many, count, 1).astype(np.float64)
            mean = total / cnt
            acc = np.zeros(n, np.float64)
            for has, f in fracs:
                d = f - mean
                acc = np.where(has, acc + d * d, acc)
            std = np.where(many, np.sqrt(acc / cnt), std)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(I64)


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> "_PreScoreState":
        return self


_PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION)


class BalancedAllocation:
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | Mapping[str, Any] | None = None,
                 handle: Any = None) -> None:
        self.args = parse_balanced_allocation_args(args)
        self.handle = handle
        self.scorer = ResourceAllocationScorer(self.name, self.args.resources, BalancedScorer(),
                                               use_requested=True)

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> NodeResourcesBalancedAllocationArgs:
        return parse_balanced_allocation_args(raw, path)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        reqs = self.scorer.pod_requests(pod)
        if not any(reqs):
            # best-effort pod: scoring balance would pile such pods onto one node
            return SKIP
        state.write(_PRE_SCORE_KEY, _PreScoreState(reqs))
        return SUCCESS

    def _requests(self, state: CycleState, pod: Pod) -> tuple[int, ...] | None:
        s = state.get(_PRE_SCORE_KEY)
        if s is not None:
            return s.pod_requests
        reqs = self.scorer.pod_requests(pod)
        return reqs if any(reqs) else None

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same requests get the same results on a node (NodeLocalPlugin)."""
        return (tuple(sorted(pod.requests.items())), pod.non0_cpu, pod.non0_mem)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        reqs = self._requests(state, pod)
        if reqs is None:
            return 0
        return self.scorer.score(node_info, reqs)

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        reqs = self._requests(state, pod)
        if reqs is None:
            return np.zeros(idx.size, I64)
        return map_classes(table, idx, lambda t, i: self.scorer.score_nodes(t, i, reqs))
