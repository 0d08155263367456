"""The FGD paper's scheduling policies, one node at a time, as its simulator scores them.

Each function scores one feasible node for one pod in [0, 100] (truncated to an integer,
as the simulator's Go code does with ``int64(...)``) and, where the policy decides it,
names the GPUs the pod would get there. Sources, all in hkust-adsl/kubernetes-scheduler-simulator
``pkg/simulator/plugin/``: ``fgd_score.go``, ``best_fit_score.go``, ``dot_product_score.go``
(dimension ``merge``, normalisation ``max``, as the paper's runs use), ``gpu_packing_score.go``,
``gpu_clustering_score.go``; the GPU choice inside a node is ``open_gpu_share.go``'s.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from kubesched.contrib.gpushare.frag import TypicalShape, node_frag
from kubesched.contrib.gpushare.model import (MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, GpuRequest, NodeGpus, packed,
                                              take, tightest_gpu, whole_gpus)

MAX_SCORE = 100


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


FragFn = Callable[[int, Sequence[int], str], float]


def fgd(node: NodeGpus, cpu: int, req: GpuRequest, typical: Sequence[TypicalShape],
        frag: FragFn | None = None) -> tuple[int, tuple[int, ...]]:
    """Fragmentation gradient descent: 100 * sigmoid(fragmentation removed / 1000); for a
    GPU-sharing pod, the GPU whose use grows fragmentation least (the first on ties).
    ``frag(cpu_left, free, model)`` may be a memoised :func:`node_frag` over ``typical``."""
    if frag is None:
        def frag(c: int, f: Sequence[int], m: str) -> float:
            return node_frag(c, f, m, typical)
    before = frag(node.cpu_left, node.free, node.model)
    cpu_after = node.cpu_left - cpu
    if req.wants_gpu and req.shares:
        score, chosen = 0, -1
        for i, f in enumerate(node.free):
            if f < req.milli:
                continue
            after = frag(cpu_after, take(node.free, req, (i,)), node.model)
            s = int(sigmoid((before - after) / 1000) * MAX_SCORE)
            if chosen < 0 or s > score:
                score, chosen = s, i
        return score, ((chosen,) if chosen >= 0 else ())
    free_after = packed(node.free, req) or list(node.free)
    after = frag(cpu_after, free_after, node.model)
    score = int(sigmoid((before - after) / 1000) * MAX_SCORE)
    return score, whole_gpus(node.free, req.count) if req.wants_gpu else ()


def bestfit_raw(node: NodeGpus, cpu: int, req: GpuRequest) -> int:
    """Best fit before normalisation: 100 * (1 - half the CPU and half the GPU left after
    the pod, each over the largest node's). The plugin then min-max normalises."""
    s = 0.0
    s += (node.cpu_left - cpu) / MAX_SPEC_CPU * 0.5
    s += (node.left - req.total) / MAX_SPEC_GPU * 0.5
    return int((1.0 - s) * MAX_SCORE)


def normalize(scores: Sequence[int]) -> list[int]:
    """The simulator's NormalizeScore: min-max to [0, 100] in integers; all 0 if equal."""
    if not scores:
        return []
    hi, lo = max(scores), min(scores)
    if hi == lo:
        return [0] * len(scores)
    return [(s - lo) * MAX_SCORE // (hi - lo) for s in scores]


def dotproduct(node: NodeGpus, cpu: int, req: GpuRequest) -> int:
    """100 * (1 - <free, request> / 2), both vectors (milli-CPU, milli-GPU) over the largest node's."""
    if node.cpu_left < cpu:
        return 0
    dot = 0.0
    dot += (node.cpu_left / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU)
    dot += (node.left / MAX_SPEC_GPU) * (req.total / MAX_SPEC_GPU)
    return int(MAX_SCORE * (1 - dot / 2))


def gpupacking(node: NodeGpus, req: GpuRequest) -> int:
    """Prefer partly used GPUs (50..100, fuller first), then free GPUs on a used node
    (33..50), then an idle node (below 33); CPU-only pods score 0."""
    if not req.wants_gpu:
        return 0
    free_gpus = node.fully_free
    if free_gpus == node.count:
        return max(MAX_SCORE // 3 - free_gpus, free_gpus)
    need, new_gpus, ratio = req.count, 0, 0
    for i in sorted(range(node.count), key=node.free.__getitem__):
        if need == 0:
            break
        if node.free[i] >= req.milli:
            need -= 1
            new_gpus += node.free[i] == MILLI
            ratio += node.free[i] * 100 // MILLI
    if need:
        return 0
    if new_gpus:
        return max(MAX_SCORE // 2 - new_gpus, MAX_SCORE // 3)
    return max(MAX_SCORE - ratio // 10, MAX_SCORE // 2)


def gpuclustering(node: NodeGpus, req: GpuRequest) -> int:
    """Group pods of one GPU kind: the node's only kind is the pod's (75..100), one of its
    kinds (50..75), an idle node (25..50), other kinds only (0..25); fuller nodes first."""
    kind = req.affinity
    if not req.wants_gpu:
        return 0
    fill = MAX_SCORE // 4 * (MAX_SPEC_GPU - node.left) // MAX_SPEC_GPU
    if node.kinds.get(kind, 0) > 0:
        return fill + (MAX_SCORE * 3 // 4 if len(node.kinds) == 1 else MAX_SCORE * 2 // 4)
    return fill + (MAX_SCORE // 4 if not node.kinds else 0)


def best_fit_gpus(node: NodeGpus, req: GpuRequest) -> tuple[int, ...]:
    """open-gpu-share's default choice: the tightest GPU for a sharing pod, else the
    lowest-indexed free GPUs."""
    if not req.wants_gpu:
        return ()
    if req.shares:
        i = tightest_gpu(node.free, req.milli)
        return (i,) if i >= 0 else ()
    return whole_gpus(node.free, req.count)


def random_gpus(node: NodeGpus, req: GpuRequest, rng: random.Random) -> tuple[int, ...]:
    """A uniformly random fitting GPU for a sharing pod (reservoir sampling), else the
    lowest-indexed free GPUs."""
    if not req.wants_gpu:
        return ()
    if not req.shares:
        return whole_gpus(node.free, req.count)
    chosen, seen = -1, 0
    for i, f in enumerate(node.free):
        if f >= req.milli:
            seen += 1
            if rng.randrange(seen) == 0:
                chosen = i
    return (chosen,) if chosen >= 0 else ()
