"""LabelGuard: a custom Filter + Score plugin for the ``kubesched extender`` tests.

The rules of tests/fidelity_extenders/test_extender.py (the corpus' standard-library
extender, see its UPSTREAM_README.md), written as a plugin, messages included. Filter, from
the pod's and the node's labels only: a pod requesting or limiting ``nvidia.com/gpu`` is
refused on ``node-type: compute`` nodes (UnschedulableAndUnresolvable), otherwise a
``tier: frontend`` pod on ``disk: hdd`` nodes (Unschedulable). Score: ``10 × (rank % 11)``
for the node label ``rank``, so 0..100 in steps of 10, which ``kubesched extender`` alone in
a profile scales to exactly ``rank % 11``: test_extender.py's Prioritize answer.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo

GPU = "nvidia.com/gpu"


def wants_gpu(pod: Pod) -> bool:
    return any(GPU in c.requests or GPU in c.limits for c in (*pod.containers, *pod.init_containers))


class LabelGuard:
    name = "LabelGuard"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        labels = node_info.node.labels if node_info.node is not None else {}
        if wants_gpu(pod) and labels.get("node-type") == "compute":
            return Status(Code.UnschedulableAndUnresolvable, ("extender: no gpu pods on compute nodes",))
        if pod.labels.get("tier") == "frontend" and labels.get("disk") == "hdd":
            return Status(Code.Unschedulable, ("extender: frontend pods avoid hdd",))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        labels = node_info.node.labels if node_info.node is not None else {}
        try:
            return 10 * (int(labels.get("rank", "0")) % 11)
        except ValueError:
            return 0
