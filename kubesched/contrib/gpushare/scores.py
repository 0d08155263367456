"""The FGD paper's policies as Score plugins (names as in its simulator).

Each scores a node with :mod:`kubesched.contrib.gpushare.policies` on the GPU state
GpuShare keeps (:mod:`kubesched.contrib.gpushare.nodestate`). Configure one of them with
GpuShare in a profile whose other score plugins are disabled, as the paper's runs do
(``examples/gpushare/``); pair FGDScore with ``gpuSelection: fgd`` and RandomScore with
``gpuSelection: random``, as the artifact pairs them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.contrib.gpushare import policies
from kubesched.contrib.gpushare.frag import DEFAULT_POPULARITY
from kubesched.contrib.gpushare.model import GpuRequestError, NodeGpus
from kubesched.contrib.gpushare.nodestate import ledger_for, pod_request
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.errors import ProfileError
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo


class _GpuScore:
    name = ""

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.ledger = ledger_for(handle)

    def _state(self, pod: Pod, node_info: NodeInfo) -> tuple[NodeGpus, Any] | None:
        try:
            return self.ledger.node(node_info), pod_request(pod)
        except GpuRequestError:
            return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        got = self._state(pod, node_info)
        return 0 if got is None else self._score(got[0], pod, got[1])

    def _score(self, node: NodeGpus, pod: Pod, req: Any) -> int:
        raise NotImplementedError


class FGDScore(_GpuScore):
    """Fragmentation gradient descent over the target workload (every pod the scheduler
    knows when it first scores, or as ``popularity`` percent of them by shape)."""

    name = "FGDScore"

    def __init__(self, args: Any, handle: Any) -> None:
        super().__init__(args, handle)
        self.popularity = int((args or {}).get("popularity", DEFAULT_POPULARITY))

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> dict[str, Any]:
        raw = dict(raw or {})
        for key, val in raw.items():
            if key != "popularity":
                raise ProfileError(f'unknown field "{key}"', field=f"{path}.{key}")
            if not isinstance(val, int) or isinstance(val, bool) or not 0 < val <= 100:
                raise ProfileError("must be an integer in 1..100", field=f"{path}.{key}")
        return raw

    def _score(self, node: NodeGpus, pod: Pod, req: Any) -> int:
        typical = self.ledger.target_workload(self.handle, self.popularity)
        return policies.fgd(node, pod.non0_cpu, req, typical, self.ledger.frag)[0]


class BestFitScore(_GpuScore):
    name = "BestFitScore"

    def _score(self, node: NodeGpus, pod: Pod, req: Any) -> int:
        return policies.bestfit_raw(node, pod.non0_cpu, req)

    def normalize_score(self, state: CycleState, pod: Pod, names: Sequence[str], scores: np.ndarray) -> Status:
        scores[:] = policies.normalize([int(s) for s in scores])
        return Status()


class DotProductScore(_GpuScore):
    name = "DotProductScore"

    def _score(self, node: NodeGpus, pod: Pod, req: Any) -> int:
        return policies.dotproduct(node, pod.non0_cpu, req)


class GpuPackingScore(_GpuScore):
    name = "GpuPackingScore"

    def _score(self, node: NodeGpus, pod: Pod, req: Any) -> int:
        return policies.gpupacking(node, req)


class GpuClusteringScore(_GpuScore):
    name = "GpuClusteringScore"

    def _score(self, node: NodeGpus, pod: Pod, req: Any) -> int:
        return policies.gpuclustering(node, req)


_PICKED: StateKey[str] = StateKey("RandomScore/picked")


class RandomScore:
    """A uniformly random feasible node scores 100, the others 0 (drawn in PreScore)."""

    name = "RandomScore"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        if nodes:
            state.write(_PICKED, nodes[self.handle.rng.randrange(len(nodes))].name)
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return policies.MAX_SCORE if state.get(_PICKED) == node_info.name else 0
