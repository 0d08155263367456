"""The node lifecycle controller, as upstream's ``pkg/controller/nodelifecycle``.

Every ``monitor_period`` it checks each node's health signals, the Lease renew time and
the Ready condition's ``lastHeartbeatTime``, against the time it last saw them change
(its own clock, as upstream, so a restart grants every node a fresh grace period):

* silent for ``monitor_grace_period`` (``node_startup_grace_period`` for a node that
  never reported): Ready, MemoryPressure, DiskPressure and PIDPressure become Unknown
  (``NodeStatusUnknown``, "Kubelet stopped posting node status."), a ``NodeNotReady``
  event is recorded and the node's pods are marked not Ready;
* NoSchedule taints follow the conditions at once (Ready Unknown:
  ``node.kubernetes.io/unreachable``, Ready False: ``node.kubernetes.io/not-ready``,
  pressure conditions, and ``node.kubernetes.io/unschedulable`` for a cordoned node);
* the NoExecute taint (unreachable or not-ready), which makes the taint eviction
  controller evict pods after their ``tolerationSeconds``, is added through a rate
  limited queue per zone: ``eviction_rate`` nodes per second (burst 1) in a healthy
  zone, ``secondary_eviction_rate`` in a partially disrupted one (0 in zones of at most
  ``large_cluster_threshold`` nodes), and none at all while every zone is fully
  disrupted (then NoExecute taints are removed, as upstream does, to avoid evicting
  everything when the control plane is the one cut off); a node Ready again loses them.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller, condition, meta, parse_time, timestamp
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Obj
from kubesched.server.nodes.agent import LEASE_NAMESPACE
from kubesched.server.nodes.taints import (
    MANAGED_NO_SCHEDULE, NO_SCHEDULE, NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE, desired_no_schedule, has_taint,
    swap_taints, taints_of,
)
from kubesched.server.nodes.zones import FULL, TokenBucket, Zone, eviction_rate, zone_key, zone_state

log = logging.getLogger(__name__)

MONITORED = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"


@dataclass(frozen=True, slots=True)
class LifecycleOptions:
    monitor_period: float = 5.0
    monitor_grace_period: float = 50.0  # v1.32+ default (was 40 s)
    startup_grace_period: float = 60.0
    eviction_rate: float = 0.1
    secondary_eviction_rate: float = 0.01
    unhealthy_zone_threshold: float = 0.55
    large_cluster_threshold: int = 50
    tainting_period: float = 0.1


@dataclass(slots=True)
class _Health:
    ready: dict[str, Any] | None
    probe: float
    transition: float
    lease_renew: float | None = None


class NodeLifecycleController(Controller[str]):
    """Workers run the NoSchedule tainting pass per node; two threads run the health
    monitor and the NoExecute tainting pass."""

    name = "node-lifecycle-controller"

    def __init__(self, registry: Registry, nodes: Informer, leases: Informer, pods: Informer,
                 recorder: EventRecorder, options: LifecycleOptions = LifecycleOptions(),
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__(1)
        self.registry, self.nodes, self.leases, self.pods = registry, nodes, leases, pods
        self.recorder = recorder
        self.opts = options
        self.clock = clock or registry.clock
        self._health: dict[str, _Health] = {}
        self._known: set[str] = set()
        self._zones: dict[str, Zone] = {}
        self._lock = threading.Lock()
        self._loops: list[threading.Thread] = []
        nodes.add_handler(lambda old, new: self.queue.add(str(meta(new or old or {}).get("name"))))

    def start(self) -> None:
        super().start()
        for fn, period in ((self.monitor, self.opts.monitor_period), (self.tainting_pass, self.opts.tainting_period)):
            t = threading.Thread(target=self._loop, args=(fn, period), name=f"{self.name}-{fn.__name__}", daemon=True)
            t.start()
            self._loops.append(t)

    def stop(self) -> None:
        super().stop()
        for t in self._loops:
            t.join(timeout=5)

    def _loop(self, fn: Callable[[], None], period: float) -> None:
        while not self._stopping.wait(period):
            try:
                fn()
            except ApiError as exc:
                log.debug("%s: %s", fn.__name__, exc.message)
            except Exception:
                if self._stopping.is_set() or self.registry.store.closed:
                    return
                log.exception("%s", fn.__name__)

    # -- NoSchedule taints (per node event) -----------------------------------------------------
    def sync(self, name: str) -> None:
        node = self.nodes.get("", name)
        if node is None:
            return
        want = desired_no_schedule(node)
        have = [t for t in taints_of(node) if t.get("effect") == NO_SCHEDULE and t.get("key") in MANAGED_NO_SCHEDULE]
        add = [t for t in want if not has_taint(node, t)]
        remove = [t for t in have if not any(w["key"] == t.get("key") for w in want)]
        if add or remove:
            self.expect(name, self.nodes, swap_taints(self.registry, name, add, remove, self.clock()))

    # -- health ---------------------------------------------------------------------------------
    def monitor(self) -> None:
        nodes = self.nodes.objects()
        names = {str(meta(n).get("name")) for n in nodes}
        for gone in self._known - names:
            self._health.pop(gone, None)
        zones: dict[str, list[dict[str, Any] | None]] = {}
        for node in nodes:
            name = str(meta(node).get("name"))
            zone = zone_key(node)
            with self._lock:
                self._zones.setdefault(zone, Zone(TokenBucket(self.opts.eviction_rate, self.clock)))
            if name not in self._known:
                self._known.add(name)
                self._mark_reachable(node)
            observed, current = self._update_health(node)
            if EXCLUDE_DISRUPTION not in (meta(node).get("labels") or {}):
                zones.setdefault(zone, []).append(current)
            if current is None:
                continue
            self._taint_for_eviction(node, observed)
            if current.get("status") != "True" and observed.get("status") == "True":
                self.recorder.event(node, NORMAL, "NodeNotReady", f"Node {name} status is now: NodeNotReady")
                self._mark_pods_not_ready(name)
        self._known &= names
        self._handle_disruption(zones, nodes)

    def _update_health(self, node: Obj) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """``tryUpdateNodeHealth``: (Ready condition before, Ready condition after)."""
        name = str(meta(node).get("name"))
        now = self.clock()
        created = parse_time(meta(node).get("creationTimestamp")) or now
        cur = condition(node, "Ready")
        h = self._health.get(name)
        if cur is None:
            observed: dict[str, Any] = {"type": "Ready", "status": "Unknown"}
            grace = self.opts.startup_grace_period
            if h is None:
                h = _Health(None, created, created)
        else:
            observed = dict(cur)
            grace = self.opts.monitor_grace_period
        saved = h.ready if h is not None else None
        if h is None or (saved is None and cur is not None) or (saved is not None and cur is None):
            h = _Health(None, now, now, h.lease_renew if h is not None else None)
        elif saved is not None and cur is not None and saved.get("lastHeartbeatTime") != cur.get("lastHeartbeatTime"):
            moved = saved.get("lastTransitionTime") != cur.get("lastTransitionTime")
            h = _Health(None, now, now if moved else h.transition, h.lease_renew)
        h.ready = dict(cur) if cur is not None else None
        lease = self.leases.get(LEASE_NAMESPACE, name)
        renew = parse_time(((lease or {}).get("spec") or {}).get("renewTime"))
        if renew is not None and (h.lease_renew is None or h.lease_renew < renew):
            h.lease_renew, h.probe = renew, now
        self._health[name] = h
        if now <= h.probe + grace:
            return observed, cur
        new = copy.deepcopy(node)
        conds = new.setdefault("status", {}).setdefault("conditions", [])
        ts = timestamp(now)
        for type_ in MONITORED:
            c = next((c for c in conds if c.get("type") == type_), None)
            if c is None:
                conds.append({"type": type_, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                              "message": "Kubelet never posted node status.",
                              "lastHeartbeatTime": meta(node).get("creationTimestamp"), "lastTransitionTime": ts})
            elif c.get("status") != "Unknown":
                c.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.",
                         lastTransitionTime=ts)
        current = condition(new, "Ready")
        if current == cur:
            return observed, current
        try:
            out = self.registry.update("nodes", None, name, new, subresource="status")
        except ApiError as exc:
            if exc.code in (404, 409):
                return observed, cur  # changed meanwhile: looked at again next period
            raise
        h.ready, h.transition = condition(out, "Ready"), now
        log.info("node %s: no heartbeat for %.0fs, Ready=Unknown", name, now - h.probe)
        return observed, current

    def _mark_pods_not_ready(self, node_name: str) -> None:
        """``MarkPodsNotReady``."""
        now = timestamp(self.clock())
        for pod in self.pods.by_index("node", node_name):
            ready = condition(pod, "Ready")
            if ready is None or ready.get("status") == "False":
                continue
            new = copy.deepcopy(pod)
            for c in new["status"]["conditions"]:
                if c.get("type") == "Ready":
                    c.update(status="False", lastTransitionTime=now)
            try:
                self.registry.update("pods", meta(pod).get("namespace"), str(meta(pod).get("name")), new,
                                     subresource="status")
            except ApiError as exc:
                if exc.code in (404, 409):
                    continue
                raise
            self.recorder.event(pod, WARNING, "NodeNotReady", "Node is not ready")

    # -- NoExecute taints (rate limited per zone) --------------------------------------------------
    def _taint_for_eviction(self, node: Obj, observed: dict[str, Any]) -> None:
        """``processTaintBaseEviction``."""
        name = str(meta(node).get("name"))
        status = observed.get("status")
        if status in ("False", "Unknown"):
            want, opposite = (NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE) if status == "False" else \
                (UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE)
            if has_taint(node, opposite):
                swap_taints(self.registry, name, [want], [opposite], self.clock())
                return
            with self._lock:
                q = self._zones.setdefault(zone_key(node), Zone(TokenBucket(self.opts.eviction_rate, self.clock))).queue
                if not has_taint(node, want) and name in q:
                    q.remove(name)
                if name not in q:
                    q.append(name)
        elif status == "True":
            self._mark_reachable(node)

    def _mark_reachable(self, node: Obj) -> None:
        name = str(meta(node).get("name"))
        remove = [t for t in (UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE) if has_taint(node, t)]
        if remove:
            swap_taints(self.registry, name, [], remove, self.clock())
        with self._lock:
            zone = self._zones.get(zone_key(node))
            if zone is not None and name in zone.queue:
                zone.queue.remove(name)

    def tainting_pass(self) -> None:
        """``doNoExecuteTaintingPass``: take nodes off each zone's queue as its rate allows."""
        with self._lock:
            zones = list(self._zones.values())
        for zone in zones:
            while True:
                with self._lock:
                    if not zone.queue or not zone.bucket.try_accept():
                        break
                    name = zone.queue[0]
                node = self.nodes.get("", name)
                ready = condition(node, "Ready") if node is not None else None
                if node is not None and ready is None:
                    break  # no Ready condition yet: try again later
                if node is not None and ready is not None and ready.get("status") in ("False", "Unknown"):
                    want, opposite = (NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE) \
                        if ready.get("status") == "False" else (UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE)
                    swap_taints(self.registry, name, [want], [opposite], self.clock())
                    log.info("node %s: tainted %s:NoExecute", name, want["key"])
                with self._lock:
                    if zone.queue and zone.queue[0] == name:
                        zone.queue.popleft()

    # -- disruption -----------------------------------------------------------------------------
    def _handle_disruption(self, zones: dict[str, list[dict[str, Any] | None]], nodes: list[Obj]) -> None:
        """``handleDisruption``: zone states, eviction rates, the all-zones-down mode."""
        new_states = {z: zone_state(c, self.opts.unhealthy_zone_threshold) for z, c in zones.items()}
        all_now = all(s == FULL for s in new_states.values())
        with self._lock:  # zones are never removed (their queues live on), only left out here
            all_before = all(self._zones[z].state == FULL for z in zones if z in self._zones)
        if all_now and all_before:
            return
        if all_now:
            log.warning("every node is not Ready: no evictions until some node is Ready again")
            for node in nodes:
                self._mark_reachable(node)
            with self._lock:
                for zone in self._zones.values():
                    zone.swap_limiter(0.0, self.clock)
                    zone.state = FULL
            return
        if all_before:
            now = self.clock()
            for h in self._health.values():
                h.probe = h.transition = now
        with self._lock:
            for z, zone in self._zones.items():
                if z not in new_states:
                    continue
                state = new_states[z]
                if zone.state != state or all_before:
                    zone.swap_limiter(eviction_rate(len(zones.get(z, [])), state, self.opts.eviction_rate,
                                                    self.opts.secondary_eviction_rate,
                                                    self.opts.large_cluster_threshold), self.clock)
                    zone.state = state


__all__ = ["LifecycleOptions", "NodeLifecycleController"]
