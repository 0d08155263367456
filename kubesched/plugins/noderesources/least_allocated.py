"""LeastAllocated: favours nodes with more unrequested resources (upstream ``least_allocated.go``).

Per resource ``(allocatable - requested) * 100 / allocatable`` (0 when over-requested), then
the weighted average over the resources the node has, all in Go's int64 arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.helper.gomath import I64, go_div, go_div_array


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


class LeastAllocated:
    __slots__ = ("weights",)

    def __init__(self, weights: Sequence[int]) -> None:
        self.weights = tuple(weights)

    def score_one(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for w, req, alloc in zip(self.weights, requested, allocatable):
            if alloc == 0:
                continue
            node_score += least_requested_score(req, alloc) * w
            weight_sum += w
        return 0 if weight_sum == 0 else go_div(node_score, weight_sum)

    def score_many(self, requested: Sequence[np.ndarray], allocatable: Sequence[np.ndarray]) -> np.ndarray:
        n = requested[0].size
        if n and all(w > 0 for w in self.weights) and all(a.min() > 0 and r.min() >= 0
                                                            for r, a in zip(requested, allocatable)):
            # every node has every resource and nothing is negative: Go's truncating division
            # is floor division, "0 when over-requested" is max(., 0), the weight sum a constant
            total = np.zeros(n, I64)
            for w, req, alloc in zip(self.weights, requested, allocatable):
                s = np.maximum(alloc - req, 0)
                s *= MAX_NODE_SCORE
                s //= alloc
                total += s * w if w != 1 else s
            total //= sum(self.weights)
            return total
        node_score = np.zeros(n, I64)
        weight_sum = np.zeros(n, I64)
        for w, req, alloc in zip(self.weights, requested, allocatable):
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            s = np.where(req > alloc, 0, go_div_array((alloc - req) * MAX_NODE_SCORE, safe))
            node_score += np.where(has, s * w, 0)
            weight_sum += np.where(has, w, 0)
        none = weight_sum == 0
        return np.where(none, 0, go_div_array(node_score, np.where(none, 1, weight_sum))).astype(I64)
