"""Pod garbage collection, as upstream's ``pkg/controller/podgc``.

Every ``period`` seconds:

* orphaned pods: a pod bound to a node that has not existed for ``quarantine`` seconds
  (confirmed with a live read: the node is gone, not just missing from the cache) is
  marked Failed with the ``DisruptionTarget`` condition (``DeletionByPodGC``, "PodGC:
  node no longer exists") and deleted with grace 0, so its ReplicaSet replaces it;
* terminated pods: beyond ``terminated_threshold`` Succeeded or Failed pods (upstream's
  ``--terminated-pod-gc-threshold``, 12500), the oldest are deleted.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import meta, pod_terminal, timestamp, uid_of
from kubesched.server.controllers.informer import Informer, Obj, key_of

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PodGCOptions:
    period: float = 20.0
    quarantine: float = 40.0
    terminated_threshold: int = 12500


class PodGC:
    name = "pod-garbage-collector"

    def __init__(self, registry: Registry, nodes: Informer, pods: Informer, options: PodGCOptions = PodGCOptions(),
                 clock: Callable[[], float] | None = None) -> None:
        self.registry, self.nodes, self.pods = registry, nodes, pods
        self.opts = options
        self.clock = clock or registry.clock
        self._missing_since: dict[str, float] = {}
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stopping.wait(self.opts.period):
            try:
                self.collect()
            except Exception:
                if self._stopping.is_set() or self.registry.store.closed:
                    return
                log.exception("pod garbage collection")

    def collect(self) -> None:
        self.collect_orphans()
        self.collect_terminated()

    def collect_orphans(self) -> None:
        now = self.clock()
        missing: set[str] = set()
        for pod in self.pods.objects():
            node = str((pod.get("spec") or {}).get("nodeName") or "")
            if node and self.nodes.get("", node) is None:
                missing.add(node)
        for node in list(self._missing_since):
            if node not in missing:
                del self._missing_since[node]
        for node in sorted(missing):
            since = self._missing_since.setdefault(node, now)
            if now - since < self.opts.quarantine:
                continue
            try:
                self.registry.get("nodes", None, node)
                continue  # the cache was behind
            except ApiError as exc:
                if exc.code != 404:
                    raise
            for pod in self.pods.by_index("node", node):
                self._fail_and_delete(pod)

    def _fail_and_delete(self, pod: Obj) -> None:
        ns, name = key_of(pod)
        if not pod_terminal(pod):
            new = copy.deepcopy(pod)
            status = new.setdefault("status", {})
            status["phase"] = "Failed"
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": timestamp(self.clock()), "reason": "DeletionByPodGC",
                          "message": "PodGC: node no longer exists"})
            status["conditions"] = conds
            try:
                self.registry.update("pods", ns, name, new, subresource="status")
            except ApiError as exc:
                if exc.code in (404, 409):
                    return  # gone, or changed: looked at again next period
                raise
        try:
            self.registry.delete("pods", ns, name, {"gracePeriodSeconds": 0, "preconditions": {"uid": uid_of(pod)}})
            log.info("deleted pod %s/%s: its node %s no longer exists", ns, name, (pod.get("spec") or {})["nodeName"])
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise

    def collect_terminated(self) -> None:
        done = [p for p in self.pods.objects() if pod_terminal(p)]
        excess = len(done) - self.opts.terminated_threshold
        if excess <= 0:
            return
        done.sort(key=lambda p: (str(meta(p).get("creationTimestamp") or ""), key_of(p)))
        for pod in done[:excess]:
            ns, name = key_of(pod)
            try:
                self.registry.delete("pods", ns, name, {"gracePeriodSeconds": 0, "preconditions": {"uid": uid_of(pod)}})
            except ApiError as exc:
                if exc.code not in (404, 409):
                    raise
