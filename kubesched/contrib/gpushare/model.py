"""The GPU-sharing model of Alibaba's open-gpu-share, as the FGD paper simulates it.

A node has ``count`` GPUs of one model, each of 1000 milli-GPU. A pod asks for
``milli`` per GPU on ``count`` GPUs: ``count == 1`` with ``milli < 1000`` shares one GPU,
otherwise the pod takes ``count`` whole GPUs (``milli == 1000``). ``models`` restricts the
GPU models the pod accepts (empty: any). Requests, capacities and the GPUs a pod was given
live in the annotations, labels and capacity keys open-gpu-share uses, so manifests made
for that ecosystem (and the openb traces) work unchanged.

Everything here is pure: plain values in, plain values out. The plugins and the
experiment engine are built on these functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MILLI = 1000
MAX_SPEC_CPU = 128000  # the largest node's milli-CPU: normalises CPU in BestFit and DotProduct
MAX_SPEC_GPU = 8000  # the largest node's milli-GPU (8 GPUs)

GPU_MILLI = "alibabacloud.com/gpu-milli"  # pod annotation: milli-GPU per GPU; node capacity: total
GPU_COUNT = "alibabacloud.com/gpu-count"  # pod annotation: GPUs asked; node capacity: GPUs
GPU_MODEL = "alibabacloud.com/gpu-card-model"  # pod annotation: allowed models "A|B"; node label
GPU_INDEX = "alibabacloud.com/gpu-index"  # pod annotation: the GPUs given, "0-1"
INDEX_SEP = "-"
MODEL_SEP = "|"

NO_GPU = "no-gpu"
SHARE_GPU = "share-gpu"


class GpuRequestError(ValueError):
    """A pod's GPU annotations cannot be read (raised by :func:`parse_request`)."""


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """What a pod asks of GPUs: ``milli`` on each of ``count`` GPUs of one of ``models``."""

    milli: int = 0
    count: int = 0
    models: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return self.milli * self.count

    @property
    def wants_gpu(self) -> bool:
        return self.count > 0 and self.milli > 0

    @property
    def shares(self) -> bool:
        return self.count == 1 and self.milli < MILLI

    @property
    def affinity(self) -> str:
        """The pod's GPU kind as GpuClustering groups pods: no-gpu, share-gpu or k-gpu."""
        if not self.wants_gpu:
            return NO_GPU
        return SHARE_GPU if self.shares else f"{self.count}-gpu"

    @property
    def spec(self) -> str:
        return MODEL_SEP.join(self.models)


def model_allowed(node_model: str, models: Sequence[str]) -> bool:
    """Whether a node of ``node_model`` serves a pod restricted to ``models`` (empty: any)."""
    if not models:
        return True
    return bool(node_model) and node_model in models


def parse_models(spec: str) -> tuple[str, ...]:
    return tuple(m for m in spec.split(MODEL_SEP) if m)


def parse_request(annotations: Mapping[str, str]) -> GpuRequest:
    """Read a pod's GPU request from its annotations; raise GpuRequestError naming the bad one."""
    raw_milli, raw_count = annotations.get(GPU_MILLI), annotations.get(GPU_COUNT)
    if raw_milli is None and raw_count is None:
        return GpuRequest()
    milli = _int_annotation(GPU_MILLI, raw_milli if raw_milli is not None else "1000")
    count = _int_annotation(GPU_COUNT, raw_count if raw_count is not None else "1")
    models = parse_models(annotations.get(GPU_MODEL, ""))
    if count == 0 or milli == 0:
        return GpuRequest(models=models)
    if milli > MILLI:
        raise GpuRequestError(f"annotation {GPU_MILLI}: {milli} is more than one GPU ({MILLI})")
    if count > 1 and milli != MILLI:
        raise GpuRequestError(f"annotation {GPU_MILLI}: a pod asking for {count} GPUs takes whole GPUs "
                              f"({MILLI}), not {milli}")
    return GpuRequest(milli, count, models)


def _int_annotation(key: str, raw: str) -> int:
    try:
        val = int(raw)
    except ValueError:
        raise GpuRequestError(f"annotation {key}: {raw!r} is not an integer") from None
    if val < 0:
        raise GpuRequestError(f"annotation {key}: {val} is negative")
    return val


def parse_indices(raw: str, gpus: int) -> tuple[int, ...]:
    """Read a ``gpu-index`` annotation ("0-2"); raise GpuRequestError if an index is bad."""
    try:
        idx = tuple(int(x) for x in raw.split(INDEX_SEP))
    except ValueError:
        raise GpuRequestError(f"annotation {GPU_INDEX}: {raw!r} is not a list of GPU indices") from None
    if any(i < 0 or i >= gpus for i in idx):
        raise GpuRequestError(f"annotation {GPU_INDEX}: {raw!r} names a GPU the node (of {gpus}) lacks")
    return idx


def format_indices(idx: Sequence[int]) -> str:
    return INDEX_SEP.join(str(i) for i in idx)


@dataclass(slots=True)
class NodeGpus:
    """A node's free resources as the GPU policies see them.

    ``free`` is the milli-GPU left on each GPU, by GPU index; ``cpu_left`` the milli-CPU
    left; ``kinds`` counts the pods on the node by :attr:`GpuRequest.affinity` (GPU pods only).
    """

    model: str
    free: list[int]
    cpu_left: int
    kinds: dict[str, int]

    @property
    def count(self) -> int:
        return len(self.free)

    @property
    def left(self) -> int:
        return sum(self.free)

    @property
    def fully_free(self) -> int:
        return sum(1 for f in self.free if f == MILLI)


def fits(node: NodeGpus, req: GpuRequest) -> bool:
    """open-gpu-share's Filter: enough GPUs with ``milli`` free, of an allowed model."""
    if not req.wants_gpu:
        return True
    if not node.free or not model_allowed(node.model, req.models):
        return False
    return sum(1 for f in node.free if f >= req.milli) >= req.count


def whole_gpus(free: Sequence[int], count: int) -> tuple[int, ...]:
    """The lowest-indexed ``count`` fully free GPUs (open-gpu-share's exclusive choice)."""
    return tuple(i for i, f in enumerate(free) if f == MILLI)[:count]


def tightest_gpu(free: Sequence[int], milli: int) -> int:
    """The GPU with the least free milli that still fits ``milli`` (first on ties); -1 if none."""
    best = -1
    for i, f in enumerate(free):
        if f >= milli and (best < 0 or f < free[best]):
            best = i
    return best


def take(free: Sequence[int], req: GpuRequest, idx: Sequence[int]) -> list[int]:
    """``free`` after giving the pod GPUs ``idx``."""
    out = list(free)
    for i in idx:
        out[i] -= req.milli
    return out


def packed(free: Sequence[int], req: GpuRequest) -> list[int] | None:
    """``free`` after the pod takes the fitting GPUs with the least free milli first (the
    simulator's ``NodeResource.Sub``); None if it does not fit."""
    out = list(free)
    need = req.count if req.wants_gpu else 0
    for i in sorted(range(len(out)), key=out.__getitem__):
        if need == 0:
            break
        if out[i] >= req.milli:
            out[i] -= req.milli
            need -= 1
    return None if need else out
