"""DynamicResources' Score, from the release with DynamicResourcesScore (upstream
``dynamicresources.go`` ``Score``/``computeScore``/``NormalizeScore``).

A node scores by the ``firstAvailable`` subrequests the allocator picked there: for each
picked subrequest, ``FirstAvailableDeviceRequestMaxSize`` (8) minus its index in the list,
so a node that can serve an earlier alternative scores higher. Requests with ``exactly``
add nothing, and a pod without claims (or a node without an allocation from Filter) scores
0. NormalizeScore scales by the highest score (``DefaultNormalizeScore``, not reversed).

Which allocation belongs to which claim: up to v1.36 the i-th claim of the pod is paired
with the i-th allocation Filter made, and an index past the allocations is an error ("number
of allocations N is smaller than number of claims"), so a pod with an allocated claim
before an unallocated one cannot be scored (upstream issue 139016). From the release with
DynamicResourcesScoreAllocatedClaims an allocated claim uses its own ``status.allocation``
and only unallocated claims consume Filter's allocations; Score then also requires the
DRAPrioritizedList gate.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from kubesched.api.dra import ResourceClaim
from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import features_of
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Status, error
from kubesched.framework.types import NodeInfo
from kubesched.plugins.dynamicresources.plugin import STATE, DynamicResources
from kubesched.plugins.helper.normalize import default_normalize_score
from kubesched.plugins.helper.pernode import score_each

FIRST_AVAILABLE_MAX = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize


def _sub_requests(requests: Sequence[str]) -> set[str]:
    """The subrequest references (``request/subrequest``) among allocated request names."""
    return {r for r in requests if "/" in r}


def claim_score(claim: ResourceClaim, allocated: set[str]) -> int:
    score = 0
    for r in claim.spec.requests:
        if r.exactly is not None:
            continue
        for i, sub in enumerate(r.first_available):
            if sub.name in allocated:
                score += FIRST_AVAILABLE_MAX - i
    return score


def compute_score(claims: Sequence[ResourceClaim], picks: Sequence[Sequence[tuple[str, Any]]],
                  own_allocations: bool) -> int | Status:
    """``computeScore``: ``picks`` are Filter's allocations, one per unallocated claim."""
    score, next_pick = 0, 0
    for i, claim in enumerate(claims):
        if own_allocations and claim.allocation is not None:
            results = claim.raw.get("status", {}).get("allocation", {}).get("devices", {}).get("results") or []
            names = [str(r.get("request", "")) for r in results if isinstance(r, dict)]
        else:
            at = next_pick if own_allocations else i
            if at >= len(picks):
                what = "claims needing allocation" if own_allocations else "claims"
                return error(f"number of allocations {len(picks)} is smaller than number of {what}")
            names = [req for req, _ in picks[at]]
            next_pick += 1
        score += claim_score(claim, _sub_requests(names))
    return score


class ScoringDynamicResources(DynamicResources):
    """DynamicResources with the Score and NormalizeScore extension points."""

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        fts = features_of(handle)
        self.own_allocations = fts.has("DynamicResourcesScoreAllocatedClaims")
        self.scores = not self.own_allocations or fts.enabled("DRAPrioritizedList")

    def signature(self, pod: Pod) -> Hashable | None:
        """A pod without claims passes Filter and scores 0 on every node (NodeLocalPlugin: the
        framework then reuses that constant); a pod with claims (or with extended resources a
        DeviceClass maps) is never cached."""
        return () if not pod.raw.get("spec", {}).get("resourceClaims") and not self.has_extended(pod) else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        s = state.get(STATE)
        if s is None:
            return error(f'failed to read "{STATE.name}" from cycleState: not found')
        if not self.scores or not s.claims or node_info.node is None:
            return 0
        found = s.node_allocations.get(node_info.node.name)
        if found is None:
            return 0
        return compute_score(s.claims, found[1], self.own_allocations)

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray | Status:
        s = state.get(STATE)
        if s is not None and (not s.node_allocations or not s.claims or not self.scores):
            return np.zeros(idx.size, np.int64)  # nothing allocated by Filter (no claims, or all allocated): 0 everywhere
        return score_each(lambda ni: self.score(state, pod, ni), table, idx)

    def normalize_score(self, state: CycleState, pod: Pod, names: Sequence[str], scores: np.ndarray) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS


def new(args: Any, handle: Any) -> DynamicResources:
    """The plugin as the handle's release builds it: with Score from DynamicResourcesScore."""
    if features_of(handle).has("DynamicResourcesScore"):
        return ScoringDynamicResources(args, handle)
    return DynamicResources(args, handle)


new.parse_args = DynamicResources.parse_args  # type: ignore[attr-defined]  # the registry parses pluginConfig args
