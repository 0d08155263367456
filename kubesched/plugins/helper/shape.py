"""``helper.BuildBrokenLinearFunction`` (upstream ``framework/plugins/helper/shape_score.go``):
a score from a utilisation through a shape of (utilization, score) points, used by
RequestedToCapacityRatio and by VolumeBinding's capacity score."""

from __future__ import annotations

import numpy as np

from kubesched.plugins.helper.gomath import I64, go_div, go_div_array

Shape = tuple[tuple[int, int], ...]  # (utilization, score) points


def broken_linear(shape: Shape, p: int) -> int:
    """``BuildBrokenLinearFunction``: flat before the first and after the last point,
    linear (Go integer arithmetic) in between."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return shape[0][1]
            pu, ps = shape[i - 1]
            return ps + go_div((s - ps) * (p - pu), u - pu)
    return shape[-1][1]


def broken_linear_array(shape: Shape, p: np.ndarray) -> np.ndarray:
    out = np.full(p.shape, shape[-1][1], I64)
    # the first point with p <= utilization wins: apply the points from last to first
    for i in range(len(shape) - 1, -1, -1):
        u, s = shape[i]
        if i == 0:
            val = np.full(p.shape, s, I64)
        else:
            pu, ps = shape[i - 1]
            val = ps + go_div_array((s - ps) * (p - pu), np.full(p.shape, u - pu, I64))
        out = np.where(p <= u, val, out)
    return out
