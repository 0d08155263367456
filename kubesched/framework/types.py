"""``NodeInfo``: one node with the pods on it and their summed requests.

The cache owns one NodeInfo per node and the snapshot hands plugins clones of the ones
that changed (upstream ``framework.NodeInfo``). ``generation`` grows on every change, so
the snapshot can copy only the nodes whose generation moved.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import ResourceList

_generation = itertools.count(1)


def next_generation() -> int:
    return next(_generation)


@dataclass(slots=True)
class ImageSummary:
    """Size of an image and on how many nodes it is present (``ImageStateSummary``).

    One object per image, shared by every NodeInfo that has the image; the cache keeps
    ``num_nodes`` current, as upstream shares the pointer.
    """

    size: int
    num_nodes: int


def pod_with_affinity(p: Pod) -> bool:
    return p.affinity is not None and p.affinity.has_pod_affinity


def pod_with_required_anti_affinity(p: Pod) -> bool:
    return p.affinity is not None and bool(p.affinity.anti_affinity_required)


class HostPorts:
    """Used host ports: ``{ip: {(protocol, port): count}}`` with upstream's 0.0.0.0 rules."""

    __slots__ = ("ports",)

    def __init__(self) -> None:
        self.ports: dict[str, dict[tuple[str, int], int]] = {}

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return ip or "0.0.0.0", protocol or "TCP"

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        m = self.ports.setdefault(ip, {})
        m[(protocol, port)] = m.get((protocol, port), 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        m = self.ports.get(ip)
        if not m:
            return
        # upstream's HostPortInfo is a set: removing a pod frees the port outright
        m.pop((protocol, port), None)
        if not m:
            del self.ports[ip]

    def conflicts(self, ip: str, protocol: str, port: int) -> bool:
        """``HostPortInfo.CheckConflict``."""
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == "0.0.0.0":
            return any(pp in m for m in self.ports.values())
        return pp in self.ports.get(ip, ()) or pp in self.ports.get("0.0.0.0", ())

    def __len__(self) -> int:
        return sum(len(m) for m in self.ports.values())

    def clone(self) -> "HostPorts":
        c = HostPorts()
        c.ports = {ip: dict(m) for ip, m in self.ports.items()}
        return c


class NodeInfo:
    """A node, its pods and their aggregated requests (upstream ``framework.NodeInfo``)."""

    __slots__ = ("node", "pods", "pods_with_affinity", "pods_with_required_anti_affinity",
                 "requested", "non0_cpu", "non0_mem", "allocatable", "used_ports",
                 "image_states", "pvc_ref_counts", "generation")

    def __init__(self, node: Node | None = None, pods: tuple[Pod, ...] = ()) -> None:
        self.node: Node | None = None
        self.pods: list[Pod] = []
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.requested: ResourceList = {}
        self.non0_cpu = 0
        self.non0_mem = 0
        self.allocatable: ResourceList = {}
        self.used_ports = HostPorts()
        self.image_states: dict[str, ImageSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod(p)

    @property
    def name(self) -> str:
        return self.node.name if self.node is not None else ""

    def set_node(self, node: Node) -> None:
        self.node = node
        self.allocatable = node.allocatable
        self.generation = next_generation()

    def remove_node(self) -> None:
        self.node = None
        self.generation = next_generation()

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        if pod_with_affinity(pod):
            self.pods_with_affinity.append(pod)
        if pod_with_required_anti_affinity(pod):
            self.pods_with_required_anti_affinity.append(pod)
        self._update(pod, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove the pod with the same namespace/name (UID); False when absent."""
        key = pod.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, p in enumerate(lst):
                if p.uid == key:
                    lst[i] = lst[-1]
                    lst.pop()
                    break
        for i, p in enumerate(self.pods):
            if p.uid == key:
                self.pods[i] = self.pods[-1]
                self.pods.pop()
                self._update(p, -1)
                return True
        return False

    def replace_pod(self, old: Pod, new: Pod) -> bool:
        """``remove_pod(old)`` then ``add_pod(new)`` (upstream's cache updatePod), with the
        same lists in the same order; the sums are left alone when both pods add the same
        amounts (equal requests, no host ports or claims, whose counters a remove and an add
        would reorder). False, and nothing changed, when ``old`` is absent."""
        key = old.uid
        pods = self.pods
        for i, p in enumerate(pods):
            if p.uid == key:
                break
        else:
            return False
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for j, q in enumerate(lst):
                if q.uid == key:
                    lst[j] = lst[-1]
                    lst.pop()
                    break
        pods[i] = pods[-1]
        pods.pop()
        pods.append(new)
        if pod_with_affinity(new):
            self.pods_with_affinity.append(new)
        if pod_with_required_anti_affinity(new):
            self.pods_with_required_anti_affinity.append(new)
        if ((p.requests is new.requests or p.requests == new.requests) and p.non0_cpu == new.non0_cpu
                and p.non0_mem == new.non0_mem and not (p.host_ports or new.host_ports
                                                        or p.pvc_names or new.pvc_names)):
            self.generation = next_generation()
        else:
            self._update(p, -1)
            self._update(new, 1)
        return True

    def _update(self, pod: Pod, sign: int) -> None:
        req = self.requested
        for name, v in pod.requests.items():
            if name == "pods":
                continue
            req[name] = req.get(name, 0) + sign * v
        self.non0_cpu += sign * pod.non0_cpu
        self.non0_mem += sign * pod.non0_mem
        for p in pod.host_ports:
            if sign > 0:
                self.used_ports.add(p.host_ip, p.protocol, p.host_port)
            else:
                self.used_ports.remove(p.host_ip, p.protocol, p.host_port)
        for claim in pod.pvc_names:
            k = f"{pod.namespace}/{claim}"
            n = self.pvc_ref_counts.get(k, 0) + sign
            if n <= 0:
                self.pvc_ref_counts.pop(k, None)
            else:
                self.pvc_ref_counts[k] = n
        self.generation = next_generation()

    def clone(self) -> "NodeInfo":
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.requested = dict(self.requested)
        c.non0_cpu = self.non0_cpu
        c.non0_mem = self.non0_mem
        c.allocatable = self.allocatable
        c.used_ports = self.used_ports.clone()
        # Image node counts are read when the node is snapshotted, as upstream's
        # ImageStateSummary.Snapshot(): unchanged nodes keep the counts they had.
        c.image_states = {k: ImageSummary(v.size, v.num_nodes) for k, v in self.image_states.items()}
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)})"
