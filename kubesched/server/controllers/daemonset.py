"""The DaemonSet controller: one pod per eligible node, rolled out node by node.

As upstream's ``pkg/controller/daemon`` (``daemon_controller.go``, ``update.go``), per
DaemonSet on every sync, from the informers' state:

* each node is judged by :func:`~.daemonutil.should_run` (nodeName, nodeSelector and
  required node affinity, taints against the template's tolerations plus the daemon
  tolerations); a node that should run the pod and has none gets one, created with the
  daemon tolerations, the revision labels and a required node affinity pinning it to the
  node (the scheduler then binds it there), once no earlier pod is still terminating there;
  a node that should not keep it loses it; a
  Failed daemon pod is deleted (and so replaced), and of several pods on one node the
  oldest is kept;
* ``RollingUpdate`` (the default; ``maxUnavailable`` default 1, integer or percentage of
  the desired number, rounded up): with ``maxSurge`` 0, pods whose
  ``controller-revision-hash`` is not the template's are deleted, unavailable ones first,
  then available ones while fewer than ``maxUnavailable`` nodes are without an
  available pod; the next sync creates their replacements. With ``maxSurge`` > 0 the new
  pod starts beside the old one (:mod:`.daemonsurge`). ``OnDelete`` replaces a pod
  only once the user deleted it;
* every template gets a ControllerRevision (:mod:`.history`), so ``kubectl rollout
  history/undo ds/x`` work;
* status: ``desiredNumberScheduled``, ``currentNumberScheduled``,
  ``numberMisscheduled``, ``numberReady``, ``numberAvailable``, ``numberUnavailable``,
  ``updatedNumberScheduled``, ``observedGeneration`` so ``kubectl rollout status ds/x``
  follows a rollout.

Not simulated: the backoff before recreating a failed pod.
"""

from __future__ import annotations

import logging
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller, controller_ref, deleting, key_of, meta, owner_key, uid_of
from kubesched.server.controllers.daemonutil import (
    REVISION_LABEL, should_run,
)
from kubesched.server.controllers.daemonsurge import excess, surge_plan
from kubesched.server.controllers.disruption import SyncError, scaled_value
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.history import History
from kubesched.server.controllers.informer import Informer, Key, Obj
from kubesched.server.controllers.naming import template_hash
from kubesched.server.controllers.podmaking import daemon_pod
from kubesched.server.controllers.replicaset import available

log = logging.getLogger(__name__)

DS_API, DS_KIND = "apps/v1", "DaemonSet"


def target_node(pod: Obj) -> str:
    """``GetTargetNodeName``: spec.nodeName, else the node its pinning affinity names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in req.get("nodeSelectorTerms") or []:
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or []) == 1:
                return str(f["values"][0])
    return ""


def _created(pod: Obj) -> str:
    return str(meta(pod).get("creationTimestamp") or "")


class DaemonSetController(Controller[Key]):
    name = "daemonset-controller"

    def __init__(self, registry: Registry, sets: Informer, pods: Informer, nodes: Informer,
                 recorder: EventRecorder, *, workers: int = 1, history: History | None = None) -> None:
        super().__init__(workers)
        self.registry = registry
        self.sets = sets
        self.pods = pods
        self.nodes = nodes
        self.recorder = recorder
        self.history = history
        sets.add_handler(self._on_set)
        pods.add_handler(self._on_pod)
        nodes.add_handler(self._on_node)

    def _on_set(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add(key_of(obj))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        for pod in (old, new):
            key = owner_key(pod, DS_KIND)
            if key is not None:
                self.queue.add(key)

    def _on_node(self, old: Obj | None, new: Obj | None) -> None:
        for ds in self.sets.objects():
            self.queue.add(key_of(ds))

    # -- sync ---------------------------------------------------------------------------------
    def sync(self, key: Key) -> None:
        ds = self.sets.get(*key)
        if ds is None:
            return
        by_node: dict[str, list[Obj]] = {}
        for pod in self.pods.by_index("namespace", key[0]):
            ref = controller_ref(pod)
            if ref is not None and ref.get("uid") == uid_of(ds):
                by_node.setdefault(target_node(pod), []).append(pod)
        for pods in by_node.values():
            pods.sort(key=_created)
        template = (ds.get("spec") or {}).get("template") or {}
        judged = {str(meta(n).get("name")): should_run(template, n) for n in self.nodes.objects()}
        revision = template_hash(template)
        if not deleting(ds) and self.history is not None:
            live = {str((meta(p).get("labels") or {}).get(REVISION_LABEL)) for ps in by_node.values() for p in ps}
            self.history.sync(ds, DS_API, DS_KIND, template, revision, live)
        if not deleting(ds):
            changed = self._manage(key, ds, by_node, judged, revision)
            if not changed:
                self._rolling_update(key, ds, by_node, judged, revision)
        self._update_status(key, ds, by_node, judged, revision)

    def _manage(self, key: Key, ds: Obj, by_node: dict[str, list[Obj]], judged: dict[str, tuple[bool, bool]],
                revision: str) -> bool:
        changed = False
        for node, (run, keep) in sorted(judged.items()):
            pods = [p for p in by_node.get(node, []) if not deleting(p)]
            if run and not by_node.get(node):  # a terminating pod is waited for (its ports, its volumes)
                self._create(key, ds, node, revision)
                changed = True
            elif not keep:
                for pod in pods:
                    self._delete(key, ds, pod)
                    changed = True
            elif run:
                failed = [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]
                for pod in failed:
                    self.recorder.event(ds, WARNING, "FailedDaemonPod",
                                        f"Found failed daemon pod {key[0]}/{meta(pod).get('name')} on node {node}, "
                                        "will try to kill it")
                    self._delete(key, ds, pod)
                    changed = True
                healthy = [p for p in pods if p not in failed]
                now, min_ready = self.registry.clock(), int((ds.get("spec") or {}).get("minReadySeconds") or 0)
                desired = sum(1 for r, _ in judged.values() if r)
                for pod in excess(healthy, revision, self._max_surge(ds, desired) > 0,
                                  lambda p: available(p, 0, now)[0], lambda p: available(p, min_ready, now)[0]):
                    self._delete(key, ds, pod)  # more than one daemon pod on the node
                    changed = True
        return changed

    def _rolling_update(self, key: Key, ds: Obj, by_node: dict[str, list[Obj]],
                        judged: dict[str, tuple[bool, bool]], revision: str) -> None:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        desired = sum(1 for run, _ in judged.values() if run)
        max_surge = self._max_surge(ds, desired)
        if max_surge > 0:
            self._surge(key, ds, by_node, judged, revision, max_surge)
            return
        try:
            max_unavailable = scaled_value((strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), desired,
                                           "maxUnavailable")
        except SyncError as exc:
            self.recorder.event(ds, WARNING, "InvalidUpdateStrategy", str(exc))
            return
        max_unavailable = max(max_unavailable, 1) if desired else 0
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.registry.clock()
        unavailable = 0
        old_available: list[Obj] = []
        for node, (run, _) in sorted(judged.items()):
            if not run:
                continue
            pods = [p for p in by_node.get(node, []) if not deleting(p)]
            ok = bool(pods) and available(pods[0], min_ready, now)[0]
            if not ok:
                unavailable += 1
            for pod in pods:
                if (meta(pod).get("labels") or {}).get(REVISION_LABEL) == revision:
                    continue
                if ok:
                    old_available.append(pod)
                else:  # an old pod that is not available anyway: replace it at once
                    self._delete(key, ds, pod)
        for pod in old_available:
            if unavailable >= max_unavailable:
                break
            self._delete(key, ds, pod)
            unavailable += 1

    def _max_surge(self, ds: Obj, desired: int) -> int:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return 0
        try:
            return scaled_value((strategy.get("rollingUpdate") or {}).get("maxSurge") or 0, desired, "maxSurge")
        except SyncError:
            return 0

    def _surge(self, key: Key, ds: Obj, by_node: dict[str, list[Obj]], judged: dict[str, tuple[bool, bool]],
               revision: str, max_surge: int) -> None:
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.registry.clock()
        nodes = {n: [p for p in by_node.get(n, []) if not deleting(p)] for n, (run, _) in judged.items() if run}
        delete, create = surge_plan(nodes, revision, max_surge, lambda p: available(p, min_ready, now)[0])
        for pod in delete:
            self._delete(key, ds, pod)
        for node in create:
            self._create(key, ds, node, revision)

    def _create(self, key: Key, ds: Obj, node: str, revision: str) -> None:
        ns = key[0]
        pod = daemon_pod(ds, node, revision)  # named by the API server from its generateName
        try:
            created = self.registry.create("pods", ns, pod)
        except ApiError as exc:
            self.recorder.event(ds, WARNING, "FailedCreate", f"Error creating: {exc.message}")
            raise
        self.expect(key, self.pods, created)
        self.recorder.event(ds, NORMAL, "SuccessfulCreate", f"Created pod: {meta(created).get('name')}")

    def _delete(self, key: Key, ds: Obj, pod: Obj) -> None:
        m = meta(pod)
        try:
            out, _ = self.registry.delete("pods", m.get("namespace"), str(m.get("name")),
                                          {"preconditions": {"uid": m.get("uid")}})
        except ApiError as exc:
            if exc.code in (404, 409):
                return
            raise
        self.expect(key, self.pods, out)
        self.recorder.event(ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {m.get('name')}")

    # -- status -------------------------------------------------------------------------------
    def _update_status(self, key: Key, ds: Obj, by_node: dict[str, list[Obj]],
                       judged: dict[str, tuple[bool, bool]], revision: str) -> None:
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.registry.clock()
        desired = current = misscheduled = ready = avail = updated = 0
        for node, pods in by_node.items():
            run = judged.get(node, (False, False))[0]
            if not run:
                misscheduled += 1 if node in judged and pods else 0
        for node, (run, _) in judged.items():
            if not run:
                continue
            desired += 1
            pods = by_node.get(node) or []
            if not pods:
                continue
            current += 1
            pod = pods[0]
            is_ready, _ = available(pod, 0, now)
            ready += is_ready
            avail += available(pod, min_ready, now)[0]
            # the oldest pod only, as upstream: during a surge the node counts once its old pod is gone
            updated += (meta(pod).get("labels") or {}).get(REVISION_LABEL) == revision
        old = ds.get("status") or {}
        status: dict[str, Any] = {
            "currentNumberScheduled": current, "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired, "numberReady": ready,
            "observedGeneration": meta(ds).get("generation", 1), "updatedNumberScheduled": updated,
            "numberAvailable": avail}
        if desired - avail:
            status["numberUnavailable"] = desired - avail
        if old.get("collisionCount"):
            status["collisionCount"] = old["collisionCount"]
        if status == old:
            return
        new = dict(ds)
        new["status"] = status
        out = self.registry.update("daemonsets.apps", key[0], key[1], new, subresource="status")
        self.expect(key, self.sets, out)
