"""MostAllocated: favours nodes with more requested resources (upstream ``most_allocated.go``).

Per resource ``min(requested, allocatable) * 100 / allocatable``, then the weighted average
over the resources the node has, all in Go's int64 arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.helper.gomath import I64, go_div, go_div_array


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    # requested can exceed capacity because pods without requests count non-zero defaults
    return go_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


class MostAllocated:
    __slots__ = ("weights",)

    def __init__(self, weights: Sequence[int]) -> None:
        self.weights = tuple(weights)

    def score_one(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for w, req, alloc in zip(self.weights, requested, allocatable):
            if alloc == 0:
                continue
            node_score += most_requested_score(req, alloc) * w
            weight_sum += w
        return 0 if weight_sum == 0 else go_div(node_score, weight_sum)

    def score_many(self, requested: Sequence[np.ndarray], allocatable: Sequence[np.ndarray]) -> np.ndarray:
        n = requested[0].size
        node_score = np.zeros(n, I64)
        weight_sum = np.zeros(n, I64)
        for w, req, alloc in zip(self.weights, requested, allocatable):
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            s = go_div_array(np.minimum(req, alloc) * MAX_NODE_SCORE, safe)
            node_score += np.where(has, s * w, 0)
            weight_sum += np.where(has, w, 0)
        none = weight_sum == 0
        return np.where(none, 0, go_div_array(node_score, np.where(none, 1, weight_sum))).astype(I64)
