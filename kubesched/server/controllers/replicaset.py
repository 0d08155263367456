"""The ReplicaSet controller: keep ``spec.replicas`` active pods, report them in status.

As upstream's ``pkg/controller/replicaset``:

* the pods of a ReplicaSet are those whose controller reference names it; orphans that
  match its selector are adopted, owned pods that stopped matching are released;
* active pods are those neither terminal (Succeeded/Failed) nor being deleted, so a pod
  that is evicted, preempted, deleted or that finishes is replaced at once;
* too few: pods are created from the template (``<rs>-<5 random chars>``, controller
  reference, at most ``burst`` per sync); too many: the pods deleted first are the
  unscheduled, then pending, not ready, most co-located, most recently ready and
  newest ones (``controller.ActivePodsWithRanks``);
* status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (ready for
  ``minReadySeconds``), observedGeneration, and a ReplicaFailure condition when pods
  cannot be created.

Deleting a ReplicaSet does not touch its pods here: the garbage collector does that.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.selectors import LabelSelector
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, condition, controller_ref, deleting, key_of, meta, owner_reference, parse_time, pod_active, pod_ready,
    timestamp, uid_of,
)
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj
from kubesched.server.controllers.naming import random_suffix
from kubesched.server.controllers.podmaking import pod_from_template

log = logging.getLogger(__name__)

RS_API, RS_KIND = "apps/v1", "ReplicaSet"
BURST_REPLICAS = 500


def selector_of(obj: Obj) -> LabelSelector | None:
    try:
        sel = LabelSelector.parse((obj.get("spec") or {}).get("selector"), "spec.selector")
    except DecodeError:
        return None
    return None if sel.empty else sel


def labels_of(obj: Obj) -> dict[str, str]:
    return dict(meta(obj).get("labels") or {})


def is_owned_by(obj: Obj, owner: Obj, kind: str) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("kind") == kind and ref.get("uid") == uid_of(owner)


def available(pod: Obj, min_ready: int, now: float) -> tuple[bool, float]:
    """(available now, seconds until it will be; 0 if never/already)."""
    if not pod_ready(pod):
        return False, 0.0
    if min_ready <= 0:
        return True, 0.0
    since = parse_time((condition(pod, "Ready") or {}).get("lastTransitionTime")) or now
    left = since + min_ready - now
    return left <= 0, max(0.0, left)


def deletion_order(pods: list[Obj]) -> list[Obj]:
    """Pods in the order a scale-down deletes them (``ActivePodsWithRanks``)."""
    on_node: dict[str, int] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node:
            on_node[node] = on_node.get(node, 0) + 1
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}

    def rank(p: Obj) -> tuple[Any, ...]:
        node = (p.get("spec") or {}).get("nodeName")
        status = p.get("status") or {}
        ready = pod_ready(p)
        ready_since = parse_time((condition(p, "Ready") or {}).get("lastTransitionTime")) or 0.0
        restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
        created = parse_time(meta(p).get("creationTimestamp")) or 0.0
        return (1 if node else 0, phase_rank.get(str(status.get("phase")), 0), 1 if ready else 0,
                -on_node.get(str(node), 0), -ready_since if ready else 0.0, -restarts, -created,
                str(meta(p).get("name")))

    return sorted(pods, key=rank)


class ReplicaSetController(Controller[Key]):
    name = "replicaset-controller"

    def __init__(self, registry: Registry, replicasets: Informer, pods: Informer, rng: random.Random,
                 recorder: EventRecorder, *, workers: int = 2, burst: int = BURST_REPLICAS,
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__(workers)
        self.registry = registry
        self.rs = replicasets
        self.pods = pods
        self.rng = rng
        self.recorder = recorder
        self.burst = burst
        self.clock = clock or registry.clock
        replicasets.add_handler(self._on_rs)
        pods.add_handler(self._on_pod)

    # -- events -------------------------------------------------------------------------------
    def _on_rs(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add(key_of(obj))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if old is not None and new is not None and labels_of(old) == labels_of(new) \
                and controller_ref(old) == controller_ref(new):
            # as upstream's updatePod: the owner is synced; an orphan whose labels did not
            # change (a status update) concerns no ReplicaSet it did not already concern
            ref = controller_ref(new)
            if ref is not None and ref.get("kind") == RS_KIND:
                self.queue.add((str(meta(new).get("namespace") or ""), str(ref.get("name"))))
            return
        for pod in (old, new):
            if pod is None:
                continue
            ns = str(meta(pod).get("namespace") or "")
            ref = controller_ref(pod)
            if ref is not None:
                if ref.get("kind") == RS_KIND:
                    self.queue.add((ns, str(ref.get("name"))))
                continue
            if deleting(pod):
                continue
            for rs in self.rs.objects(ns):  # an orphan: whoever may adopt it
                sel = selector_of(rs)
                if sel is not None and sel.matches(labels_of(pod)):
                    self.queue.add((ns, str(meta(rs).get("name"))))

    # -- sync ---------------------------------------------------------------------------------
    def sync(self, key: Key) -> None:
        ns, name = key
        rs = self.rs.get(ns, name)
        if rs is None:
            return
        selector = selector_of(rs)
        if selector is None:
            return
        owned = self._claim(rs, selector)
        active = [p for p in owned if pod_active(p)]
        error = None
        if not deleting(rs):
            error = self._manage(key, rs, active)
        self._update_status(key, rs, active, error)

    def _claim(self, rs: Obj, selector: LabelSelector) -> list[Obj]:
        ns = str(meta(rs).get("namespace") or "")
        owned = []
        for pod in self.pods.by_index("namespace", ns):
            matches = selector.matches(labels_of(pod))
            if is_owned_by(pod, rs, RS_KIND):
                if matches or deleting(rs):
                    owned.append(pod)
                else:
                    self._set_owner(pod, None)
            elif controller_ref(pod) is None and matches and not deleting(pod) and not deleting(rs):
                adopted = self._set_owner(pod, rs)
                if adopted is not None:
                    owned.append(adopted)
        return owned

    def _set_owner(self, pod: Obj, rs: Obj | None) -> Obj | None:
        """Adopt ``pod`` for ``rs`` (or release it when ``rs`` is None); the pod, or None."""
        m = meta(pod)
        refs = [r for r in m.get("ownerReferences") or [] if not r.get("controller")]
        if rs is not None:
            refs.append(owner_reference(rs, RS_API, RS_KIND))
        patch = {"metadata": {"ownerReferences": refs or None, "uid": m.get("uid"),
                              "resourceVersion": m.get("resourceVersion")}}
        try:
            return self.registry.patch("pods", m.get("namespace"), str(m.get("name")),
                                       "application/merge-patch+json", patch)
        except ApiError as exc:
            if exc.code in (404, 409, 422):
                return None
            raise

    def _manage(self, key: Key, rs: Obj, active: list[Obj]) -> str | None:
        want = int((rs.get("spec") or {}).get("replicas") or 0)
        diff = len(active) - want
        if diff < 0:
            return self._create(key, rs, min(-diff, self.burst))
        if diff > 0:
            for pod in deletion_order(active)[:diff]:
                self._delete(key, rs, pod)
        return None

    def _create(self, key: Key, rs: Obj, count: int) -> str | None:
        m = meta(rs)
        ns, rs_name = str(m.get("namespace") or ""), str(m.get("name"))
        template = (rs.get("spec") or {}).get("template") or {}
        for _ in range(count):
            pod = pod_from_template(template, rs, RS_API, RS_KIND)
            pmeta = pod["metadata"]
            created = None
            for _attempt in range(5):
                pmeta["name"] = f"{rs_name}-{random_suffix(self.rng)}"
                try:
                    created = self.registry.create("pods", ns, pod)
                    break
                except ApiError as exc:
                    if exc.reason == "AlreadyExists":
                        continue
                    self.recorder.event(rs, WARNING, "FailedCreate", f"Error creating: {exc.message}")
                    return exc.message
            if created is None:
                return "could not generate a unique pod name"
            self.expect(key, self.pods, created)
            self.recorder.event(rs, NORMAL, "SuccessfulCreate", f"Created pod: {meta(created).get('name')}")
        return None

    def _delete(self, key: Key, rs: Obj, pod: Obj) -> None:
        m = meta(pod)
        try:
            out, _ = self.registry.delete("pods", m.get("namespace"), str(m.get("name")),
                                          {"preconditions": {"uid": m.get("uid")}})
        except ApiError as exc:
            if exc.code in (404, 409):
                return
            self.recorder.event(rs, WARNING, "FailedDelete", f"Error deleting: {exc.message}")
            raise
        self.expect(key, self.pods, out)
        self.recorder.event(rs, NORMAL, "SuccessfulDelete", f"Deleted pod: {m.get('name')}")

    # -- status -------------------------------------------------------------------------------
    def _update_status(self, key: Key, rs: Obj, active: list[Obj], error: str | None) -> None:
        now = self.clock()
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        ready = avail = labeled = 0
        recheck = 0.0
        for p in active:
            if all(labels_of(p).get(k) == v for k, v in tlabels.items()):
                labeled += 1
            if pod_ready(p):
                ready += 1
            ok, left = available(p, min_ready, now)
            avail += ok
            if left > 0:
                recheck = left if not recheck else min(recheck, left)
        old = rs.get("status") or {}
        status: dict[str, Any] = {"replicas": len(active), "fullyLabeledReplicas": labeled,
                                  "readyReplicas": ready, "availableReplicas": avail,
                                  "observedGeneration": meta(rs).get("generation", 1)}
        conds = [c for c in old.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
        if error is not None:
            prev = next((c for c in old.get("conditions") or [] if c.get("type") == "ReplicaFailure"), None)
            conds.append({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                          "message": error, "lastTransitionTime": (prev or {}).get("lastTransitionTime")
                          or timestamp(now)})
        if conds:
            status["conditions"] = conds
        if recheck:
            self.queue.add_after(key, recheck + 0.05)
        if error is not None:
            self.queue.add_rate_limited(key)
        if status == {k: v for k, v in old.items() if k in status or k == "conditions"}:
            return
        new = dict(rs)
        new["status"] = status
        out = self.registry.update("replicasets", key[0], key[1], new, subresource="status")
        self.expect(key, self.rs, out)
