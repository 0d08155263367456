"""The nominator: pods nominated to nodes by preemption that are not bound yet (upstream
``nominator``).

A nominated pod reserves room on its node: lower or equal priority pods are filtered as if
it were already there. The nominator keeps the latest object of each nominated pod and
never nominates a pod that no longer exists or is already bound (checked through the
optional ``pod_lister``, the informer's view of the pod).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from kubesched.api.objects import Pod

log = logging.getLogger(__name__)


class NominatingMode(Enum):
    Noop = "Noop"  # keep the node of the pod's status.nominatedNodeName
    Override = "Override"  # use NominatingInfo.node (possibly "")


@dataclass(frozen=True, slots=True)
class NominatingInfo:
    node: str
    mode: NominatingMode = NominatingMode.Override


class Nominator:
    def __init__(self, pod_lister: Callable[[Pod], Pod | None] | None = None) -> None:
        self.pod_lister = pod_lister
        self.nominated_pods: dict[str, list[Pod]] = {}  # node -> pods, in nomination order
        self.nominated_pod_to_node: dict[str, str] = {}  # pod uid -> node

    def add_nominated_pod(self, pod: Pod, info: NominatingInfo | None = None) -> None:
        """Upstream ``AddNominatedPod``; ``info`` None is the Noop mode."""
        self._delete(pod)
        if info is not None and info.mode == NominatingMode.Override:
            node = info.node
        else:
            if not pod.nominated_node_name:
                return
            node = pod.nominated_node_name
        if self.pod_lister is not None:
            current = self.pod_lister(pod)
            if current is None or current.node_name:
                log.debug("pod %s is gone or bound: not nominated", pod.key)
                return
        self.nominated_pod_to_node[pod.uid] = node
        pods = self.nominated_pods.setdefault(node, [])
        if all(p.uid != pod.uid for p in pods):
            pods.append(pod)

    def update_nominated_pod(self, old: Pod, new: Pod) -> None:
        """Upstream ``UpdateNominatedPod``: keep the in-memory nomination of a pod whose
        update carries none (the update may predate the nomination)."""
        info = None
        if not old.nominated_node_name and not new.nominated_node_name:
            node = self.nominated_pod_to_node.get(old.uid)
            if node is not None:
                info = NominatingInfo(node)
        self._delete(old)
        self.add_nominated_pod(new, info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._delete(pod)

    def _delete(self, pod: Pod) -> None:
        node = self.nominated_pod_to_node.pop(pod.uid, None)
        if node is None:
            return
        pods = [p for p in self.nominated_pods.get(node, ()) if p.uid != pod.uid]
        if pods:
            self.nominated_pods[node] = pods
        else:
            self.nominated_pods.pop(node, None)

    def nominated_pods_for_node(self, node: str) -> list[Pod]:
        return list(self.nominated_pods.get(node, ()))

    # -- the names the scheduler uses ----------------------------------------------------
    def add(self, pod: Pod, node: str) -> None:
        """Nominate ``pod`` to ``node`` (Override mode); an empty node only clears."""
        if not node:
            self._delete(pod)
            return
        self.add_nominated_pod(pod, NominatingInfo(node))

    def delete(self, pod: Pod) -> None:
        self._delete(pod)

    def pods_for_node(self, node: str) -> list[Pod]:
        return self.nominated_pods_for_node(node)

    def nodes(self) -> dict[str, list[Pod]]:
        """Every node with nominated pods, and those pods."""
        return {n: list(p) for n, p in self.nominated_pods.items()}
