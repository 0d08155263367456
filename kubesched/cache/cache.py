"""``Cache``: the scheduler's view of nodes and the pods on them, including pods it has
assumed but not yet seen bound.

Pod state machine (upstream ``backend/cache/interface.go``)::

    Initial ──Assume──▶ Assumed ──Add (bind confirmed)──▶ Added ──Remove──▶ Deleted
                          │  ▲                               │
                          │  └───────(expired / Forget)      └──Update──▶ Added
                          └──Forget──▶ Initial

An assumed pod's resources count on its node at once, so the next cycle cannot use them
twice. ``finish_binding`` starts the expiry clock (``ttl`` seconds, 0 = never expire, as
upstream's default); ``cleanup_expired`` drops assumed pods whose binding never showed up.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from kubesched.api.objects import Node, Pod
from kubesched.cache.node_tree import NodeTree
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.types import ImageSummary, NodeInfo

log = logging.getLogger(__name__)


class CacheError(Exception):
    """An impossible transition (a bug in the caller): assume twice, forget unknown, ..."""


@dataclass(slots=True)
class _PodState:
    pod: Pod
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


class Cache:
    def __init__(self, ttl: float = 0.0) -> None:
        self.ttl = ttl
        self.nodes: dict[str, NodeInfo] = {}
        self.tree = NodeTree()
        self.pod_states: dict[str, _PodState] = {}
        self.images: dict[str, tuple[ImageSummary, set[str]]] = {}
        self._dirty: set[str] = set()
        self._nodes_changed = True

    # -- nodes ------------------------------------------------------------------------
    def _node_info(self, name: str) -> NodeInfo:
        ni = self.nodes.get(name)
        if ni is None:
            ni = self.nodes[name] = NodeInfo()
        return ni

    def add_node(self, node: Node) -> NodeInfo:
        ni = self._node_info(node.name)
        old = ni.node
        if old is not None:
            self._remove_images(old)
        self.tree.update(old, node)
        ni.set_node(node)
        self._add_images(node, ni)
        self._dirty.add(node.name)
        self._nodes_changed = self._nodes_changed or old is None
        return ni

    update_node = add_node

    def remove_node(self, node: Node) -> None:
        ni = self.nodes.get(node.name)
        if ni is None or ni.node is None:
            return
        self._remove_images(ni.node)
        self.tree.remove(ni.node)
        if ni.pods:
            ni.remove_node()  # pods still there: the NodeInfo stays until they are gone
        else:
            del self.nodes[node.name]
        self._nodes_changed = True

    def _add_images(self, node: Node, ni: NodeInfo) -> None:
        states: dict[str, ImageSummary] = {}
        for im in node.images:
            for name in im.names:
                entry = self.images.get(name)
                if entry is None:
                    entry = self.images[name] = (ImageSummary(im.size_bytes, 0), set())
                summary, holders = entry
                if node.name not in holders:
                    holders.add(node.name)
                    summary.num_nodes = len(holders)
                states[name] = summary
        ni.image_states = states

    def _remove_images(self, node: Node) -> None:
        for im in node.images:
            for name in im.names:
                entry = self.images.get(name)
                if entry is None:
                    continue
                summary, holders = entry
                holders.discard(node.name)
                summary.num_nodes = len(holders)
                if not holders:
                    del self.images[name]

    # -- pods -------------------------------------------------------------------------
    def _add_to_node(self, pod: Pod) -> None:
        self._node_info(pod.node_name).add_pod(pod)
        self._dirty.add(pod.node_name)

    def _remove_from_node(self, pod: Pod) -> None:
        ni = self.nodes.get(pod.node_name)
        if ni is None:
            return
        ni.remove_pod(pod)
        self._dirty.add(pod.node_name)
        if ni.node is None and not ni.pods:
            del self.nodes[pod.node_name]
            self._nodes_changed = True

    def _replace_on_node(self, old: Pod, new: Pod) -> None:
        """``_remove_from_node(old)`` then ``_add_to_node(new)``, in one pass when both are
        on the same node (NodeInfo.replace_pod: the same result). A node already deleted
        takes the two steps: its NodeInfo may go with its last pod, as it did."""
        ni = self.nodes.get(old.node_name)
        if ni is None or ni.node is None or old.node_name != new.node_name or not ni.replace_pod(old, new):
            self._remove_from_node(old)
            self._add_to_node(new)
            return
        self._dirty.add(new.node_name)

    def assume_pod(self, pod: Pod) -> None:
        """``pod.node_name`` is the chosen node; the pod counts there from now on."""
        if pod.uid in self.pod_states:
            raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._add_to_node(pod)
        self.pod_states[pod.uid] = _PodState(pod, assumed=True)

    def finish_binding(self, pod: Pod, now: float) -> None:
        st = self.pod_states.get(pod.uid)
        if st is not None and st.assumed:
            st.binding_finished = True
            st.deadline = now + self.ttl if self.ttl > 0 else None

    def forget_pod(self, pod: Pod) -> None:
        st = self.pod_states.get(pod.uid)
        if st is None:
            return
        if not st.assumed:
            raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
        self._remove_from_node(st.pod)
        del self.pod_states[pod.uid]

    def is_assumed(self, pod: Pod) -> bool:
        st = self.pod_states.get(pod.uid)
        return st is not None and st.assumed

    def get_pod(self, uid: str) -> Pod | None:
        st = self.pod_states.get(uid)
        return None if st is None else st.pod

    def add_pod(self, pod: Pod) -> None:
        """A bound pod was observed (confirms an assumed pod, possibly on another node)."""
        st = self.pod_states.get(pod.uid)
        if st is not None and st.assumed:
            if st.pod.node_name != pod.node_name:
                log.warning("pod %s was assumed on %s but assigned to %s",
                            pod.key, st.pod.node_name, pod.node_name)
            self._replace_on_node(st.pod, pod)
            st.pod, st.assumed, st.deadline = pod, False, None
            return
        if st is not None:
            self.update_pod(st.pod, pod)
            return
        self._add_to_node(pod)
        self.pod_states[pod.uid] = _PodState(pod)

    def update_pod(self, old: Pod, new: Pod) -> None:
        st = self.pod_states.get(old.uid)
        if st is None or st.assumed:
            self.add_pod(new)
            return
        self._replace_on_node(st.pod, new)
        st.pod = new

    def remove_pod(self, pod: Pod) -> None:
        st = self.pod_states.pop(pod.uid, None)
        if st is not None:
            self._remove_from_node(st.pod)

    def cleanup_expired(self, now: float) -> list[Pod]:
        expired = [st.pod for st in self.pod_states.values()
                   if st.assumed and st.binding_finished and st.deadline is not None and now >= st.deadline]
        for p in expired:
            log.warning("assumed pod %s expired", p.key)
            self._remove_from_node(p)
            del self.pod_states[p.uid]
        return expired

    def pods(self) -> list[Pod]:
        return [st.pod for st in self.pod_states.values()]

    # -- snapshot ---------------------------------------------------------------------
    def update_snapshot(self, snap: Snapshot) -> None:
        """Bring ``snap`` up to date, cloning only the NodeInfos that changed."""
        rebuild = self._nodes_changed
        affinity_changed: list[str] = []
        seen = snap.generation  # what the snapshot had before this update
        for name in self._dirty:
            ni = self.nodes.get(name)
            if ni is None or ni.node is None:
                rebuild = True
                continue
            if ni.generation <= seen and name in snap.node_map:
                continue
            old = snap.node_map.get(name)
            clone = ni.clone()
            if old is None or (bool(old.pods_with_affinity) != bool(clone.pods_with_affinity) or
                               bool(old.pods_with_required_anti_affinity)
                               != bool(clone.pods_with_required_anti_affinity)):
                affinity_changed.append(name)
            if not snap._replace(clone):
                rebuild = True
            snap.generation = max(snap.generation, ni.generation)
        self._dirty.clear()
        if rebuild:
            for name in list(snap.node_map):
                ni = self.nodes.get(name)
                if ni is None or ni.node is None:
                    del snap.node_map[name]
            for name, ni in self.nodes.items():
                if ni.node is not None and name not in snap.node_map:
                    snap.node_map[name] = ni.clone()
            snap._set_lists(self.tree.list())
            self._nodes_changed = False
        elif affinity_changed:
            snap._update_affinity_lists(affinity_changed)


def snapshot_of(pods: Iterable[Pod], nodes: Iterable[Node]) -> Snapshot:
    """A snapshot of these nodes with these (bound) pods: for tests and one-off use."""
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        if p.node_name:
            cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    return snap
