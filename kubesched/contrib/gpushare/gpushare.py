"""GpuShare: GPU sharing as Alibaba's open-gpu-share does it (the FGD paper's simulator
plugin ``Open-Gpu-Share``): Filter, Reserve/Unreserve and PreBind.

Filter: a pod asking for GPUs needs a node of an allowed model with ``count`` GPUs that
each have ``milli`` free (CPU and memory stay NodeResourcesFit's). Reserve picks the GPUs:
``gpuSelection`` ``tightest`` (the artifact's ``best``: the fitting GPU with the least free
milli), ``random`` (a uniformly random fitting GPU) or ``fgd`` (the GPU that grows
fragmentation least); pods taking whole GPUs get the lowest-indexed free ones. PreBind
records the choice on the pod as the ``alibabacloud.com/gpu-index`` annotation. A pending
pod that already names its GPUs in that annotation gets exactly those, if they have room.

The annotation is written on the scheduler's copy of the pod: ``simulate`` and the Python
API show it; ``serve`` and ``run`` do not send it to the API server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.contrib.gpushare import policies
from kubesched.contrib.gpushare.frag import DEFAULT_POPULARITY
from kubesched.contrib.gpushare.model import GPU_INDEX, GpuRequestError, fits, format_indices, parse_indices
from kubesched.contrib.gpushare.nodestate import ledger_for, pod_request
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.errors import ProfileError
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo

SELECTIONS = ("tightest", "random", "fgd")
_CHOSEN: StateKey[tuple[int, ...]] = StateKey("GpuShare/chosen")


@dataclass(frozen=True, slots=True)
class GpuShareArgs:
    gpuSelection: str = "tightest"  # noqa: N815 (the configuration's field name)
    popularity: int = DEFAULT_POPULARITY


def parse_gpushare_args(raw: Mapping[str, Any] | None, path: str) -> GpuShareArgs:
    raw = dict(raw or {})
    for key in raw:
        if key not in ("gpuSelection", "popularity"):
            raise ProfileError(f'unknown field "{key}"', field=f"{path}.{key}")
    sel = raw.get("gpuSelection", "tightest")
    if sel not in SELECTIONS:
        raise ProfileError(f"must be one of {', '.join(SELECTIONS)}", field=f"{path}.gpuSelection")
    pop = raw.get("popularity", DEFAULT_POPULARITY)
    if not isinstance(pop, int) or isinstance(pop, bool) or not 0 < pop <= 100:
        raise ProfileError("must be an integer in 1..100", field=f"{path}.popularity")
    return GpuShareArgs(sel, pop)


class GpuShare:
    name = "GpuShare"

    def __init__(self, args: GpuShareArgs | None, handle: Any) -> None:
        self.args = args or GpuShareArgs()
        self.handle = handle
        self.ledger = ledger_for(handle)

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> GpuShareArgs:
        return parse_gpushare_args(raw, path)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            req = pod_request(pod)
        except GpuRequestError as exc:
            return Status.of(Code.UnschedulableAndUnresolvable, f"pod {pod.key}: {exc}")
        if not req.wants_gpu:
            return Status()
        node = self.ledger.node(node_info)
        if not node.free:
            return Status.of(Code.UnschedulableAndUnresolvable, "node has no GPU")
        preset = pod.annotations.get(GPU_INDEX)
        if preset:  # GPUs named by the pod: those must have room (open-gpu-share's AllocateGpuId)
            try:
                idx = parse_indices(preset, node.count)
            except GpuRequestError as exc:
                return Status.of(Code.UnschedulableAndUnresolvable, str(exc))
            if len(idx) != req.count or any(node.free[i] < req.milli for i in idx):
                return Status.of(Code.Unschedulable, f"GPUs {preset} lack free milli-GPU")
            return Status()
        if not fits(node, req):
            if req.models and node.model not in req.models:
                return Status.of(Code.UnschedulableAndUnresolvable, "node's GPU model is not requested")
            return Status.of(Code.Unschedulable, "insufficient free GPU")
        return Status()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        req = pod_request(pod)
        if not req.wants_gpu:
            return Status()
        ni = self.handle.snapshot.get(node_name)
        if ni is None:
            return Status.of(Code.Error, f"node {node_name} not found")
        node = self.ledger.node(ni)
        preset = pod.annotations.get(GPU_INDEX)
        if preset:
            self.ledger.reserve(pod, node_name, parse_indices(preset, node.count))
            return Status()
        if self.args.gpuSelection == "fgd":
            typical = self.ledger.target_workload(self.handle, self.args.popularity)
            gpus = policies.fgd(node, pod.non0_cpu, req, typical, self.ledger.frag)[1]
        elif self.args.gpuSelection == "random":
            gpus = policies.random_gpus(node, req, self.handle.rng)
        else:
            gpus = policies.best_fit_gpus(node, req)
        if len(gpus) != req.count:
            return Status.of(Code.Unschedulable, f"node {node_name}: insufficient free GPU")
        self.ledger.reserve(pod, node_name, gpus)
        state.write(_CHOSEN, gpus)
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.ledger.unreserve(pod)
        if state.get(_CHOSEN):  # remove only what PreBind wrote
            pod.annotations.pop(GPU_INDEX, None)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        gpus = state.get(_CHOSEN)
        if gpus:
            pod.annotations[GPU_INDEX] = format_indices(gpus)
        return Status()
