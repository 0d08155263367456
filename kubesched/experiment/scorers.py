"""The paper's policies over all candidate nodes at once (the batch form of
:mod:`kubesched.contrib.gpushare.policies`, with the same arithmetic in the same order, so
both give equal scores; ``tests/experiment/test_scorers.py`` checks it).

A scorer returns one integer score per candidate and, for the chosen node, the GPUs the
pod gets there (the artifact's ``gpuSelMethod``: FGD for FGD, random for Random, the
tightest GPU for the others).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kubesched.contrib.gpushare import policies
from kubesched.contrib.gpushare.frag import TypicalShape
from kubesched.contrib.gpushare.model import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI
from kubesched.experiment.cluster import Cluster, PodRow

I64 = npt.NDArray[np.int64]
IDX = npt.NDArray[np.intp]
MAX = policies.MAX_SCORE


class Scorer(Protocol):
    def scores(self, cl: Cluster, cand: IDX, pod: PodRow) -> I64: ...

    def gpus(self, cl: Cluster, i: int, pod: PodRow, rng: random.Random) -> tuple[int, ...]: ...


class _TightestGpu:
    def gpus(self, cl: Cluster, i: int, pod: PodRow, rng: random.Random) -> tuple[int, ...]:
        return policies.best_fit_gpus(cl.node(i), pod.gpu)


def _sigmoid_score(delta: npt.NDArray[np.float64]) -> I64:
    """int(100 * sigmoid(delta / 1000)) with math.exp, as the per-node form computes it."""
    x = delta / 1000
    ux, inv = np.unique(x, return_inverse=True)
    sig = np.array([1.0 / (1.0 + math.exp(-v)) for v in ux.tolist()], dtype=np.float64)
    return np.trunc(sig * MAX).astype(np.int64)[inv.reshape(-1)]


class FGD:
    def __init__(self, typical: Sequence[TypicalShape]) -> None:
        self.typical = list(typical)

    def scores(self, cl: Cluster, cand: IDX, pod: PodRow) -> I64:
        g = pod.gpu
        before = cl.frag[cand]
        free = cl.free[cand]
        cpu_after = cl.cpu_left[cand] - pod.cpu
        if g.wants_gpu and g.shares:
            width = free.shape[1]
            earlier = np.tril(np.ones((width, width), dtype=bool), -1)
            dup = ((free[:, :, None] == free[:, None, :]) & earlier).any(axis=2)
            rows, cols = np.nonzero((free >= g.milli) & ~dup)
            after_free = free[rows]
            after_free[np.arange(len(rows)), cols] -= g.milli
            after = cl.table.frag_rows(cpu_after[rows], after_free, cl.model_id[cand][rows])
            s = _sigmoid_score(before[rows] - after)
            out = np.full(len(cand), -1, dtype=np.int64)
            np.maximum.at(out, rows, s)
            return out
        after_free = free
        if g.wants_gpu:
            whole = free == MILLI
            after_free = np.where(whole & (np.cumsum(whole, axis=1) <= g.count), free - g.milli, free)
        after = cl.table.frag_rows(cpu_after, after_free, cl.model_id[cand])
        return _sigmoid_score(before - after)

    def gpus(self, cl: Cluster, i: int, pod: PodRow, rng: random.Random) -> tuple[int, ...]:
        return policies.fgd(cl.node(i), pod.cpu, pod.gpu, self.typical)[1]


class BestFit(_TightestGpu):
    def scores(self, cl: Cluster, cand: IDX, pod: PodRow) -> I64:
        s = (cl.cpu_left[cand] - pod.cpu) / MAX_SPEC_CPU * 0.5
        s = s + (cl.left[cand] - pod.gpu.total) / MAX_SPEC_GPU * 0.5
        raw = np.trunc((1.0 - s) * MAX).astype(np.int64)
        lo, hi = int(raw.min()), int(raw.max())
        if hi == lo:
            return np.zeros(len(cand), dtype=np.int64)
        return (raw - lo) * MAX // (hi - lo)


class DotProduct(_TightestGpu):
    def scores(self, cl: Cluster, cand: IDX, pod: PodRow) -> I64:
        dot = (cl.cpu_left[cand] / MAX_SPEC_CPU) * (pod.cpu / MAX_SPEC_CPU)
        dot = dot + (cl.left[cand] / MAX_SPEC_GPU) * (pod.gpu.total / MAX_SPEC_GPU)
        return np.trunc(MAX * (1 - dot / 2)).astype(np.int64)


class GpuPacking(_TightestGpu):
    def scores(self, cl: Cluster, cand: IDX, pod: PodRow) -> I64:
        g = pod.gpu
        if not g.wants_gpu:
            return np.zeros(len(cand), dtype=np.int64)
        free = cl.free[cand]
        whole = (free == MILLI).sum(axis=1)
        idle = np.maximum(MAX // 3 - whole, whole)
        if g.shares:
            tight = np.where(free >= g.milli, free, MILLI + 1).min(axis=1)
            used = np.where(tight == MILLI, max(MAX // 2 - 1, MAX // 3),
                            np.maximum(MAX - (tight * 100 // MILLI) // 10, MAX // 2))
        else:
            used = np.full(len(cand), max(MAX // 2 - g.count, MAX // 3), dtype=np.int64)
        return np.where(whole == cl.gpu_count[cand], idle, used).astype(np.int64)


class GpuClustering(_TightestGpu):
    def scores(self, cl: Cluster, cand: IDX, pod: PodRow) -> I64:
        if not pod.gpu.wants_gpu:
            return np.zeros(len(cand), dtype=np.int64)
        fill = MAX // 4 * (MAX_SPEC_GPU - cl.left[cand]) // MAX_SPEC_GPU
        same = cl.kinds[cand, pod.kind] > 0
        kinds = cl.n_kinds[cand]
        bonus = np.where(same, np.where(kinds == 1, MAX * 3 // 4, MAX * 2 // 4),
                         np.where(kinds == 0, MAX // 4, 0))
        return (fill + bonus).astype(np.int64)


class Random:
    """Random: a uniformly drawn feasible node (the artifact's PreScore draws it and scores
    it alone 100), then a uniformly drawn fitting GPU. It has no scores to compare."""

    def gpus(self, cl: Cluster, i: int, pod: PodRow, rng: random.Random) -> tuple[int, ...]:
        return policies.random_gpus(cl.node(i), pod.gpu, rng)
