"""``helper.DefaultNormalizeScore`` (upstream ``framework/plugins/helper/normalize_score.go``):
scale scores to [0, MaxNodeScore] by the highest, optionally reversed."""

from __future__ import annotations

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.helper.gomath import go_div_array


def default_normalize_score(scores: np.ndarray, reverse: bool) -> None:
    """``DefaultNormalizeScore(MaxNodeScore, reverse, scores)``, in place: each score times
    MaxNodeScore divided (Go's truncating division) by the highest; with ``reverse`` the
    result is subtracted from MaxNodeScore; all zero (or negative) stays, or becomes
    MaxNodeScore when reversed."""
    if scores.size == 0:
        return
    max_count = max(int(scores.max()), 0)
    if max_count == 0:
        if reverse:
            scores[:] = MAX_NODE_SCORE
        return
    out = go_div_array(scores.astype(np.int64) * MAX_NODE_SCORE, np.full(scores.shape, max_count, np.int64))
    if reverse:
        out = MAX_NODE_SCORE - out
    scores[:] = out
