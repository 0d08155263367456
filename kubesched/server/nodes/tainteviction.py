"""Taint eviction: pods on a node with NoExecute taints they do not tolerate are deleted.

As upstream's ``pkg/controller/tainteviction``: when a node's NoExecute taints change,
or a pod lands on a tainted node, each pod there is looked at:

* a taint it does not tolerate: deleted at once;
* all tolerated: deleted after the smallest ``tolerationSeconds`` of the tolerations
  used (never, when none of them sets it), counted from when this controller first
  scheduled the eviction; the DefaultTolerationSeconds admission gives every pod 300 s
  for ``node.kubernetes.io/not-ready`` and ``unreachable``;
* the taints gone, or tolerated forever: the pending eviction is cancelled.

An eviction first adds the ``DisruptionTarget`` condition (``DeletionByTaintManager``)
to the pod's status, then deletes it with its own grace period, and records a
``TaintManagerEviction`` event. The workload controllers then replace the pod.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable

from kubesched.api.objects import Taint
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, deleting, meta, pod_terminal, timestamp, uid_of, update_with_retry,
)
from kubesched.server.controllers.events import NORMAL, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj, key_of
from kubesched.server.nodes.taints import matching_tolerations, min_toleration_seconds, no_execute, tolerations_of

log = logging.getLogger(__name__)


class TaintEvictionController(Controller[Key]):
    name = "taint-eviction-controller"

    def __init__(self, registry: Registry, nodes: Informer, pods: Informer, recorder: EventRecorder, *,
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__(2)
        self.registry, self.nodes, self.pods = registry, nodes, pods
        self.recorder = recorder
        self.clock = clock or registry.clock
        self._lock = threading.Lock()
        self._scheduled: dict[Key, tuple[str, float, float]] = {}  # pod -> (uid, created, fire at)
        nodes.add_handler(self._on_node)
        pods.add_handler(self._on_pod)

    # -- events -------------------------------------------------------------------------------
    def _on_node(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            return
        taints = no_execute(new)
        if old is not None and no_execute(old) == taints:
            return
        for pod in self.pods.by_index("node", str(meta(new).get("name"))):
            self._process(pod, taints)

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            assert old is not None
            self._cancel(key_of(old))
            return
        node_name = (new.get("spec") or {}).get("nodeName")
        if not node_name:
            return
        if old is not None and (old.get("spec") or {}).get("nodeName") == node_name and \
                (old.get("spec") or {}).get("tolerations") == (new.get("spec") or {}).get("tolerations"):
            return
        self._process(new, no_execute(self.nodes.get("", str(node_name))))

    def _cancel(self, key: Key) -> None:
        with self._lock:
            self._scheduled.pop(key, None)

    def _process(self, pod: Obj, taints: list[Taint]) -> None:
        """``processPodOnNode``."""
        key = key_of(pod)
        if not taints or deleting(pod) or pod_terminal(pod):
            self._cancel(key)
            return
        now = self.clock()
        tolerated, used = matching_tolerations(taints, tolerations_of(pod))
        if not tolerated:
            self._schedule(key, uid_of(pod), now, now)
            return
        seconds = min_toleration_seconds(used)
        if seconds < 0:
            self._cancel(key)
            return
        start, trigger = now, now + seconds
        with self._lock:
            existing = self._scheduled.get(key)
        if existing is not None:
            start = existing[1]
            if start + seconds < trigger:
                return
        self._schedule(key, uid_of(pod), start, trigger)

    def _schedule(self, key: Key, uid: str, created: float, fire: float) -> None:
        with self._lock:
            self._scheduled[key] = (uid, created, fire)
        self.queue.add_after(key, fire - self.clock())

    # -- evictions ----------------------------------------------------------------------------
    def sync(self, key: Key) -> None:
        with self._lock:
            entry = self._scheduled.get(key)
        if entry is None:
            return
        uid, _, fire = entry
        now = self.clock()
        if now < fire:
            self.queue.add_after(key, fire - now)
            return
        pod = self.pods.get(*key)
        with self._lock:
            if self._scheduled.get(key) == entry:
                del self._scheduled[key]
        if pod is None or uid_of(pod) != uid or deleting(pod):
            return
        self.recorder.event(pod, NORMAL, "TaintManagerEviction", f"Marking for deletion Pod {key[0]}/{key[1]}")
        self._add_condition(key, uid)
        try:
            self.registry.delete("pods", key[0], key[1], {"preconditions": {"uid": uid}})
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise
        log.info("evicted pod %s/%s from a NoExecute-tainted node", *key)

    def _add_condition(self, key: Key, uid: str) -> None:
        ts = timestamp(self.clock())

        def mutate(cur: Obj) -> Obj | None:
            if uid_of(cur) != uid:
                return None
            new = copy.deepcopy(cur)
            status = new.setdefault("status", {})
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": ts, "reason": "DeletionByTaintManager",
                          "message": "Taint manager: deleting due to NoExecute taint"})
            status["conditions"] = conds
            return new

        try:
            update_with_retry(lambda: self.registry.get("pods", key[0], key[1]), mutate,
                              lambda o: self.registry.update("pods", key[0], key[1], o, subresource="status"))
        except ApiError as exc:
            log.debug("DisruptionTarget on %s/%s: %s", key[0], key[1], exc.message)
