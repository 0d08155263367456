"""GPU fragmentation as the FGD paper measures it (Weng et al., ATC '23, section 3).

The *target workload* is the distribution of pod shapes (milli-CPU, milli-GPU per GPU, GPU
count, allowed models) expected to arrive; the simulator keeps the most popular shapes that
together make up 95% of the pods (``typical pods``) and renormalises their frequencies.

A node's idle GPU milli is *fragmented* for a shape when that shape cannot use it: the
shape asks for no GPU, the node's model is not allowed, too few GPUs have enough free
milli, or the node lacks the CPU. When the shape fits, only the GPUs with less free milli
than the shape asks for are fragmented. A node's fragmentation is the frequency-weighted
sum over the shapes; FGD places a pod where that sum grows least.

:func:`node_frag` is the per-node form; :func:`frag_rows` computes the same sums, in the
same order of operations, for many node states at once (NumPy), so both give equal values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.contrib.gpushare.model import GpuRequest, model_allowed

DEFAULT_POPULARITY = 95  # percent of pods the typical shapes must cover (the artifact's setting)


@dataclass(frozen=True, slots=True)
class Shape:
    """A pod shape: milli-CPU (non-zero request) and its GPU request."""

    cpu: int
    gpu: GpuRequest

    def key(self) -> tuple[int, int, int, str]:
        return (self.cpu, self.gpu.milli if self.gpu.wants_gpu else 0, self.gpu.count if self.gpu.wants_gpu else 0,
                self.gpu.spec)


@dataclass(frozen=True, slots=True)
class TypicalShape:
    shape: Shape
    freq: float


def typical_shapes(shapes: Iterable[Shape], popularity: int = DEFAULT_POPULARITY,
                   step: int = 1) -> list[TypicalShape]:
    """The most popular shapes covering ``popularity`` percent of the pods, frequencies
    renormalised to sum to 1 (the simulator's ``GetTypicalPods``: count descending, equal
    counts by larger shape first, added ``step`` shapes at a time)."""
    counts = Counter(s.key() for s in shapes)
    total = float(sum(counts.values()))
    if total == 0:
        return []
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    expected = float(popularity) * total / 100.0
    i = taken = 0
    cum = 0.0
    while cum < expected:
        taken += step
        while i < taken and i < len(ranked):
            cum += ranked[i][1]
            i += 1
    out: list[TypicalShape] = []
    for key, cnt in ranked[:i]:
        freq = cnt / total
        if i < len(ranked):
            freq /= cum / total
        out.append(TypicalShape(_shape_of(key), freq))
    return out


def _shape_of(key: tuple[int, int, int, str]) -> Shape:
    cpu, milli, count, spec = key
    models = tuple(m for m in spec.split("|") if m)
    return Shape(cpu, GpuRequest(milli, count, models))


def node_frag(cpu_left: int, free: Sequence[int], model: str, typical: Sequence[TypicalShape]) -> float:
    """Fragmented milli-GPU of one node for the target workload ``typical``."""
    left = sum(free)
    frag = 0.0
    for t in typical:
        g = t.shape.gpu
        amount = left
        if g.wants_gpu and model_allowed(model, g.models) and t.shape.cpu <= cpu_left \
                and sum(1 for f in free if f >= g.milli) >= g.count:
            amount = sum(f for f in free if f < g.milli)
        frag += t.freq * amount
    return frag


def idle_weight(typical: Sequence[TypicalShape]) -> float:
    """Sum of the frequencies (1 up to rounding): idle milli is ``left * idle_weight``."""
    w = 0.0
    for t in typical:
        w += t.freq
    return w


class FragTable:
    """:func:`node_frag` over many node states at once.

    ``models`` names the model ids used in ``model_id`` arrays; rows are node states given
    as milli-CPU left, free milli per GPU (padded with zeros) and model id.
    """

    def __init__(self, typical: Sequence[TypicalShape], models: Sequence[str]) -> None:
        self.typical = list(typical)
        self.millis = sorted({t.shape.gpu.milli for t in typical if t.shape.gpu.wants_gpu})
        self.allowed = [np.array([model_allowed(m, t.shape.gpu.models) for m in models], dtype=bool)
                        for t in typical]

    def frag_rows(self, cpu_left: npt.NDArray[np.int64], free: npt.NDArray[np.int64],
                  model_id: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        left = free.sum(axis=1)
        fit: dict[int, npt.NDArray[np.int64]] = {}
        small: dict[int, npt.NDArray[np.int64]] = {}
        for m in self.millis:
            under = free < m
            fit[m] = (~under).sum(axis=1)
            small[m] = np.where(under, free, 0).sum(axis=1)
        out = np.zeros(len(left), dtype=np.float64)
        for t, allowed in zip(self.typical, self.allowed):
            g = t.shape.gpu
            if not g.wants_gpu:
                amount = left
            else:
                ok = allowed[model_id] & (fit[g.milli] >= g.count) & (cpu_left >= t.shape.cpu)
                amount = np.where(ok, small[g.milli], left)
            out += t.freq * amount
        return out
