"""What the web UI shows, as JSON: pages of nodes and pods, the queue, the events.

The UI reads the scheduler's own state, not the store: the informers' decoded objects and
the cache's ``NodeInfo`` (allocatable and requested per resource, the pods on each node).
That is what the scheduler decided with, it is in memory (a 20,000-pod list is a walk
over Python objects, not 20,000 JSON decodes), and it is the same in ``serve`` and ``run``.

Every list is filtered and paged here (``q``, ``offset``, ``limit``), so a browser never
receives 5,000 nodes or 20,000 pods at once: it asks for the rows it can show. The
scheduler's lock is held only to copy what one page needs (the cache's counts of a page
of nodes, the queue's members), never while JSON is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kubesched.api.objects import Node, Pod
from kubesched.live.scheduler import LiveScheduler

Visible = Callable[[str], bool]  # may the caller see the pods of this namespace?
MAX_LIMIT = 500
QUEUE_MEMBERS = 200  # pods listed per queue (the counts are always whole)
T = TypeVar("T")


class BadRequest(ValueError):
    """A query parameter the UI's endpoints cannot use (the message names it)."""


class NoScheduler(Exception):
    """Raised by the views when no scheduler runs (``serve --no-scheduler``): nothing to show."""


@dataclass(frozen=True, slots=True)
class Page:
    offset: int
    limit: int
    q: str

    @classmethod
    def parse(cls, params: Any, default_limit: int = 100) -> "Page":
        def number(name: str, default: int) -> int:
            raw = params.get(name)
            if raw is None or raw == "":
                return default
            try:
                value = int(raw)
            except ValueError:
                raise BadRequest(f"query parameter {name}: {raw!r} is not an integer") from None
            if value < 0:
                raise BadRequest(f"query parameter {name}: must not be negative")
            return value
        return cls(number("offset", 0), min(number("limit", default_limit), MAX_LIMIT),
                   str(params.get("q") or "").strip().lower())

    def cut(self, rows: Sequence[T]) -> Sequence[T]:
        return rows[self.offset:self.offset + self.limit]


def _condition(raw: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for c in (raw.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def pod_status(pod: Pod) -> str:
    """Pending, Gated, Running, Succeeded, ... as ``kubectl get pods`` would say it, roughly."""
    if pod.deletion_timestamp:
        return "Terminating"
    if pod.node_name:
        return pod.phase or "Pending"
    if pod.scheduling_gates:
        return "SchedulingGated"
    return "Pending"


def why(pod: Pod) -> str:
    """The PodScheduled condition's message: ``0/N nodes are available: ...``."""
    c = _condition(pod.raw, "PodScheduled")
    if c is None or c.get("status") == "True":
        return ""
    return str(c.get("message") or c.get("reason") or "")


def pod_row(pod: Pod) -> dict[str, Any]:
    return {"namespace": pod.namespace, "name": pod.name, "node": pod.node_name, "status": pod_status(pod),
            "priority": pod.priority, "schedulerName": pod.scheduler_name, "requests": dict(pod.requests),
            "nominatedNode": pod.nominated_node_name, "why": why(pod) if not pod.node_name else "",
            "created": (pod.raw.get("metadata") or {}).get("creationTimestamp", "")}


def _matches(q: str, *texts: str) -> bool:
    return not q or any(q in t.lower() for t in texts)


class Views:
    """The JSON documents of the UI, over the scheduler ``live()`` returns (in ``run`` a
    replica builds a new one when it regains the lease: always ask for the current one)."""

    def __init__(self, live: Callable[[], LiveScheduler | None]) -> None:
        self._live = live

    def live(self) -> LiveScheduler:
        live = self._live()
        if live is None:
            raise NoScheduler("no scheduler is running (serve --no-scheduler): nothing to show")
        return live

    # -- nodes -------------------------------------------------------------------------------
    def nodes(self, page: Page) -> dict[str, Any]:
        live = self.live()
        nodes = sorted((n for n in live.nodes.values() if _matches(page.q, n.name, *_label_texts(n))),
                       key=lambda n: n.name)
        shown = page.cut(nodes)
        with live.sched.lock:
            usage = {n.name: _usage(live, n.name) for n in shown}
        return {"total": len(nodes), "offset": page.offset, "all": len(live.nodes),
                "items": [_node_row(n, *usage[n.name]) for n in shown]}

    def node(self, name: str, visible: Visible | None = None) -> dict[str, Any] | None:
        """One node and its pods (those of namespaces ``visible`` accepts)."""
        live = self.live()
        node = live.nodes.get(name)
        if node is None:
            return None
        with live.sched.lock:
            requested, pods = _usage(live, name)
            on_node = list(live.cache.nodes[name].pods) if name in live.cache.nodes else []
        row = _node_row(node, requested, pods)
        row["pods"] = [pod_row(p) for p in sorted(on_node, key=lambda p: p.key)
                       if visible is None or visible(p.namespace)]
        row["labels"] = dict(node.labels)
        return row

    # -- pods --------------------------------------------------------------------------------
    def pods(self, page: Page, *, pending: bool = False, node: str = "",
             visible: Visible | None = None) -> dict[str, Any]:
        """A page of pods (of the namespaces ``visible`` accepts; ``all`` counts those too)."""
        live = self.live()
        shown = list(live.pods.values()) if visible is None else [p for p in live.pods.values()
                                                                  if visible(p.namespace)]

        def keep(p: Pod) -> bool:
            if pending and p.node_name:
                return False
            if node and p.node_name != node:
                return False
            return _matches(page.q, p.namespace + "/" + p.name, p.node_name)
        pods = sorted(filter(keep, shown), key=lambda p: (p.namespace, p.name))
        return {"total": len(pods), "offset": page.offset, "all": len(shown),
                "items": [pod_row(p) for p in page.cut(pods)]}

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        live = self.live()
        pod = live.pods.get_namespaced(namespace, name)
        if pod is None:
            return None
        row = pod_row(pod)
        row["why"] = why(pod)
        with live.sched.lock:
            row["queue"] = live.queue.where(pod)
        row["tolerations"] = [{"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
                              for t in pod.tolerations]
        return row

    # -- the scheduling queue ----------------------------------------------------------------
    def queue(self, visible: Visible | None = None) -> dict[str, Any]:
        """The scheduling queue's pods (of the namespaces ``visible`` accepts) and counts."""
        live = self.live()
        q = live.queue
        with live.sched.lock:
            buckets = {"active": list(q.active_q.infos()), "backoff": list(q.backoff_q.infos()),
                       "unschedulable": list(q.unschedulable.values()), "gated": list(q.gated.values())}
            in_flight = len(q.in_flight_uids())
        if visible is not None:
            buckets = {name: [i for i in infos if visible(i.pod.namespace)] for name, infos in buckets.items()}
        with live.sched.lock:
            rows = {name: [_queued(i, name) for i in sorted(infos, key=lambda i: i.pod.key)[:QUEUE_MEMBERS]]
                    for name, infos in buckets.items()}
        return {"counts": {name: len(infos) for name, infos in buckets.items()}, "inFlight": in_flight,
                "pods": rows, "listed": QUEUE_MEMBERS}


def _queued(info: Any, bucket: str) -> dict[str, Any]:
    row: dict[str, Any] = {"namespace": info.pod.namespace, "name": info.pod.name, "attempts": info.attempts,
                           "priority": info.pod.priority}
    if bucket == "backoff":
        row["backoffExpiration"] = info.backoff_expiration
    if info.unschedulable_plugins:
        row["unschedulablePlugins"] = sorted(info.unschedulable_plugins)
    if info.gating_plugin:
        row["gatingPlugin"] = info.gating_plugin
    row["why"] = why(info.pod)
    return row


def _label_texts(node: Node) -> Iterable[str]:
    return (f"{k}={v}" for k, v in node.labels.items())


def _usage(live: LiveScheduler, name: str) -> tuple[dict[str, int], int]:
    """Requested resources and pod count of a node, from the cache (under the lock)."""
    ni = live.cache.nodes.get(name)
    if ni is None:
        return {}, 0
    return dict(ni.requested), len(ni.pods)


def _node_row(node: Node, requested: dict[str, int], pods: int) -> dict[str, Any]:
    conditions = [{"type": c.get("type"), "status": c.get("status"), "reason": c.get("reason", "")}
                  for c in (node.raw.get("status") or {}).get("conditions") or () if isinstance(c, dict)]
    resources = [{"name": r, "allocatable": a, "requested": requested.get(r, 0)}
                 for r, a in sorted(node.allocatable.items()) if r != "pods"]
    resources.append({"name": "pods", "allocatable": node.allocatable.get("pods", 0), "requested": pods})
    return {"name": node.name, "unschedulable": node.unschedulable, "pods": pods,
            "taints": [t.to_string() for t in node.taints], "conditions": conditions, "resources": resources}
