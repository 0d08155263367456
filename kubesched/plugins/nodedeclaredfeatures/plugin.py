"""NodeDeclaredFeatures (upstream ``plugins/nodedeclaredfeatures/nodedeclaredfeatures.go``).

PreFilter infers the features the pod needs from its spec (the release's registry); a pod
that needs none skips the plugin. Filter rejects, as UnschedulableAndUnresolvable, a node
whose ``status.declaredFeatures`` lacks one of them: from 1.36 with one reason for every
node, ``node(s) didn't match Pod's required features``; in 1.35 naming the missing
features. With the gate off the plugin does nothing (it may still be configured).

A rejected pod is retried when a node is added or its declared features change, or when its
own update changes what it needs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.kubeversion import minor_number
from kubesched.api.nodedeclaredfeatures import Feature, infer_for_scheduling, registry
from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.features import features_of
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names

logger = logging.getLogger(__name__)

ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
_GENERIC_REJECT = unresolvable(ERR_REASON_UNSATISFIED_REQUIREMENTS)


@dataclass(frozen=True, slots=True)
class _State:
    reqs: frozenset[str]

    def clone(self) -> "_State":
        return self


PRE_FILTER_KEY: StateKey[_State] = StateKey("PreFilter" + names.NODE_DECLARED_FEATURES)


def _spec(pod: Pod) -> dict[str, Any]:
    spec = pod.raw.get("spec")
    return spec if isinstance(spec, dict) else {}


class NodeDeclaredFeatures:
    name = names.NODE_DECLARED_FEATURES

    def __init__(self, args: Any = None, handle: Any = None, *,
                 features: Sequence[Feature] | None = None, version: tuple[int, int, int] | None = None,
                 enabled: bool | None = None) -> None:
        """``features``, ``version`` and ``enabled`` replace what the handle's release gives
        (the registry, the scheduler's own version, the gate), as upstream's tests do."""
        fts = features_of(handle)
        self.enabled = fts.enabled("NodeDeclaredFeatures") if enabled is None else enabled
        self.features = tuple(sorted(features, key=lambda f: f.name)) if features is not None \
            else registry(fts.version)
        self.version = version if version is not None else (1, minor_number(fts.version), 0)
        self.generic_reason = fts.has("NodeDeclaredFeaturesGenericReason")

    def requirements(self, pod: Pod) -> frozenset[str]:
        """The features ``pod`` needs on its node (upstream ``InferForPodScheduling``)."""
        return infer_for_scheduling(self.features, _spec(pod), self.version)

    # -- PreFilter / Filter ---------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        if not self.enabled:
            return None, SKIP
        reqs = self.requirements(pod)
        if not reqs:
            return None, SKIP
        state.write(PRE_FILTER_KEY, _State(reqs))
        return None, SUCCESS

    @staticmethod
    def _state(state: CycleState) -> _State | Status:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return error(f'error reading "{PRE_FILTER_KEY.name}" from cycle-state: not found')
        return s

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray | Status:
        """Batch form: each distinct declared-features list is checked once."""
        if not self.enabled:
            return np.ones(idx.size, bool)
        s = self._state(state)
        if isinstance(s, Status):
            return s
        seen: dict[tuple[str, ...], bool] = {}
        out = np.empty(idx.size, bool)
        for k, i in enumerate(idx.tolist()):
            node = table.infos[i].node
            declared = node.declared_features if node is not None else ()
            ok = seen.get(declared)
            if ok is None:
                ok = seen[declared] = s.reqs.issubset(declared)
            out[k] = ok
        return out

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not self.enabled:
            return SUCCESS
        s = self._state(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        missing = s.reqs.difference(node.declared_features if node is not None else ())
        if not missing:
            return SUCCESS
        if self.generic_reason:
            return _GENERIC_REJECT
        # 1.35 lists the missing features in Go map order; its registry has one feature
        # needed to schedule, so at most one is ever named.
        return unresolvable("node declared features check failed - unsatisfied requirements: "
                            + ", ".join(sorted(missing)))

    # -- Queueing hints -------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeDeclaredFeature),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.Update), self.is_schedulable_after_pod_update),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue for a new node or a node whose declared features changed (as listed)."""
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.Queue  # upstream: a type error, retried with backoff
        if old is not None and old.declared_features == new.declared_features:
            logger.debug("node %s: declared features unchanged, pod %s not queued", new.name, pod.key)
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_update(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue only for the pod's own update, and only when it changes what the pod needs."""
        if not isinstance(new, Pod) or not isinstance(old, Pod):
            return QueueingHint.Queue
        if new.uid != pod.uid:
            return QueueingHint.QueueSkip
        if self.requirements(old) == self.requirements(new):
            return QueueingHint.QueueSkip
        logger.debug("pod %s: feature requirements changed, queued", pod.key)
        return QueueingHint.Queue
