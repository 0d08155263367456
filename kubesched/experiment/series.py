"""From per-arrival steps to one value per integer percent of arrived workload.

As the artifact's ``experiments/analysis/merge_*_discrete.py`` do it: a step's arrived
percent is ``arrived milli / GPUs / 10`` rounded half to even; the value at percent ``p``
is the mean over the steps at ``p`` (else over the steps at ``p-1..p+1``; else no value).
Allocation is rounded to 2 decimals per step and the mean again; the fragmentation ratio
and amount go through the artifact's log line first (``%.2f``), then the mean.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from kubesched.experiment.engine import Steps

F64 = npt.NDArray[np.float64]
Series = dict[int, float]


def _bucketed(percent: npt.NDArray[np.int64], values: F64, last: int, finish: Callable[[float], float]) -> Series:
    out: Series = {}
    for p in range(last + 1):
        sel = values[percent == p]
        if not len(sel):
            sel = values[(percent >= p - 1) & (percent <= p + 1)]
            if not len(sel):
                continue
        out[p] = finish(float(np.mean(sel)))
    return out


def arrived_percent(steps: Steps, total_gpus: int) -> npt.NDArray[np.int64]:
    return np.round(steps.arrived / total_gpus / 10).astype(np.int64)


def allocation(steps: Steps, total_gpus: int, last: int) -> Series:
    """GPU allocation ratio (% of the cluster's milli-GPU) per percent of arrived workload."""
    alloc = np.round(steps.used / total_gpus / 10, 2)
    return _bucketed(arrived_percent(steps, total_gpus), alloc, last, lambda v: float(np.round(v, 2)))


def frag_ratio(steps: Steps, total_gpus: int, last: int) -> Series:
    """Fragmented share of the idle milli-GPU (%) per percent of arrived workload."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.array([float(f"{v:.2f}") for v in (100 * steps.frag / steps.idle).tolist()])
    return _bucketed(arrived_percent(steps, total_gpus), ratio, last, lambda v: v)


def frag_amount(steps: Steps, total_gpus: int, last: int) -> Series:
    """Fragmented milli-GPU as % of the cluster's GPUs per percent of arrived workload."""
    milli = np.array([float(f"{v:.2f}") for v in steps.frag.tolist()])
    return _bucketed(arrived_percent(steps, total_gpus), milli, last,
                     lambda v: float(np.round(100 * v / 1000 / total_gpus, 2)))
