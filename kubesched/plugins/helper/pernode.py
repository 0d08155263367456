"""A plugin's per-node Score over the rows of a batch: the batch form for plugins whose
score has no array form, with the first Status (an error) returned as the framework expects."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo


def score_each(score: Callable[[NodeInfo], int | Status], table: NodeTable, idx: np.ndarray) -> np.ndarray | Status:
    """``score`` of every row in ``idx``, in order; the first Status it returns instead."""
    out = np.zeros(idx.size, np.int64)
    for j, i in enumerate(idx.tolist()):
        v = score(table.infos[i])
        if isinstance(v, Status):
            return v
        out[j] = v
    return out
