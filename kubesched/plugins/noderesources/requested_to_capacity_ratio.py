"""RequestedToCapacityRatio: scores utilisation through a user-given broken-linear shape
(upstream ``requested_to_capacity_ratio.go`` and ``plugins/helper/shape_score.go``).

The shape's scores (0..10) are scaled to 0..100. Per resource the utilisation is
``requested * 100 / allocatable`` (100 when over-requested), mapped through the shape;
resources scoring 0 are left out of the weighted average, which is rounded half away from
zero as Go's ``math.Round``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.args import UtilizationShapePoint
from kubesched.plugins.helper.gomath import I64, go_div, go_div_array, go_round, go_round_array
from kubesched.plugins.helper.shape import Shape, broken_linear, broken_linear_array
from kubesched.plugins.noderesources.validation import MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION

class RequestedToCapacityRatio:
    __slots__ = ("weights", "shape")

    def __init__(self, weights: Sequence[int], shape: Sequence[UtilizationShapePoint]) -> None:
        self.weights = tuple(weights)
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        self.shape: Shape = tuple((p.utilization, p.score * scale) for p in shape)

    def _resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return broken_linear(self.shape, MAX_UTILIZATION)
        return broken_linear(self.shape, go_div(requested * MAX_UTILIZATION, capacity))

    def score_one(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for w, req, alloc in zip(self.weights, requested, allocatable):
            if alloc == 0:
                continue
            s = self._resource_score(req, alloc)
            if s > 0:
                node_score += s * w
                weight_sum += w
        return 0 if weight_sum == 0 else go_round(float(node_score) / float(weight_sum))

    def score_many(self, requested: Sequence[np.ndarray], allocatable: Sequence[np.ndarray]) -> np.ndarray:
        n = requested[0].size
        node_score = np.zeros(n, I64)
        weight_sum = np.zeros(n, I64)
        for w, req, alloc in zip(self.weights, requested, allocatable):
            has = alloc != 0
            full = req > alloc
            p = go_div_array(req * MAX_UTILIZATION, np.where(has, alloc, 1))
            p = np.where(full, MAX_UTILIZATION, p)
            s = broken_linear_array(self.shape, p)
            take = has & (s > 0)
            node_score += np.where(take, s * w, 0)
            weight_sum += np.where(take, w, 0)
        none = weight_sum == 0
        ratio = node_score.astype(np.float64) / np.where(none, 1, weight_sum).astype(np.float64)
        return np.where(none, 0, go_round_array(ratio)).astype(I64)
