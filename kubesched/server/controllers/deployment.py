"""The Deployment controller: one ReplicaSet per pod template, rolled out by strategy.

As upstream's ``pkg/controller/deployment``:

* the ReplicaSets of a Deployment are those whose controller reference names it
  (orphans matching its selector are adopted); the *new* one is the oldest whose
  template equals the Deployment's ignoring ``pod-template-hash``; it is created as
  ``<deployment>-<hash>`` with the hash in its labels, selector and template, a
  controller reference, and the revision annotations (``deployment.kubernetes.io/
  revision`` one above the old ones, ``desired-replicas``, ``max-replicas``);
* RollingUpdate: scale the new ReplicaSet up within ``replicas + maxSurge`` pods, then
  the old ones down while at least ``replicas - maxUnavailable`` pods are available
  (unhealthy old replicas first); Recreate: old ReplicaSets to zero, wait until their
  pods are gone, then the new one to ``replicas``. Scaling the Deployment during a
  rollout is not proportional across ReplicaSets (upstream's ``isScalingEvent``): the
  rollout arithmetic converges to the same end state;
* a paused Deployment (``spec.paused``) starts no rollout; scaling it resizes its one
  active ReplicaSet (not proportionally across several, as upstream would mid-rollout);
  the Progressing condition says DeploymentPaused, then DeploymentResumed;
* status and the Available/Progressing conditions as :mod:`.rollout` computes them, the
  progress deadline checked again when it would expire; old ReplicaSets beyond
  ``revisionHistoryLimit`` deleted once the rollout is complete.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers import rollout as R
from kubesched.server.controllers.base import Controller, controller_ref, deleting, meta, owner_reference, uid_of
from kubesched.server.controllers.events import NORMAL, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj, rv_of
from kubesched.server.controllers.naming import equal_ignore_hash
from kubesched.server.controllers.podmaking import new_replicaset
from kubesched.server.controllers.replicaset import is_owned_by, labels_of, selector_of

log = logging.getLogger(__name__)

DEPLOY_API, DEPLOY_KIND = "apps/v1", "Deployment"
_SKIP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", R.REVISION, "deployment.kubernetes.io/"
                     "revision-history", R.DESIRED_REPLICAS, R.MAX_REPLICAS)


def rs_annotations(d: Obj, rs: Obj | None, rev: int) -> dict[str, str]:
    """A new ReplicaSet's annotations (``SetNewReplicaSetAnnotations``): the Deployment's own
    (but kubectl's and the revision ones), the revision, desired and max replicas."""
    ann = dict(meta(rs).get("annotations") or {}) if rs is not None else {}
    for k, v in (meta(d).get("annotations") or {}).items():
        if k not in _SKIP_ANNOTATIONS:
            ann[k] = v
    ann[R.REVISION] = str(rev)
    ann[R.DESIRED_REPLICAS] = str(R.replicas(d))
    ann[R.MAX_REPLICAS] = str(R.replicas(d) + R.max_surge(d))
    return ann


def created_at(obj: Obj) -> tuple[str, str]:
    return str(meta(obj).get("creationTimestamp") or ""), str(meta(obj).get("name"))


class DeploymentController(Controller[Key]):
    name = "deployment-controller"

    def __init__(self, registry: Registry, deployments: Informer, replicasets: Informer, pods: Informer,
                 recorder: EventRecorder, *, workers: int = 2, clock: Callable[[], float] | None = None) -> None:
        super().__init__(workers)
        self.registry = registry
        self.deps = deployments
        self.rs = replicasets
        self.pods = pods
        self.recorder = recorder
        self.clock = clock or registry.clock
        self._fresh: dict[Key, Obj] = {}
        deployments.add_handler(self._on_deployment)
        replicasets.add_handler(self._on_rs)
        pods.add_handler(self._on_pod)

    # -- events -------------------------------------------------------------------------------
    def _on_deployment(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add((str(meta(obj).get("namespace") or ""), str(meta(obj).get("name"))))

    def _on_rs(self, old: Obj | None, new: Obj | None) -> None:
        for rs in (old, new):
            if rs is None:
                continue
            ns = str(meta(rs).get("namespace") or "")
            ref = controller_ref(rs)
            if ref is not None:
                if ref.get("kind") == DEPLOY_KIND:
                    self.queue.add((ns, str(ref.get("name"))))
                continue
            for d in self.deps.objects(ns):
                sel = selector_of(d)
                if sel is not None and sel.matches(labels_of(rs)):
                    self.queue.add((ns, str(meta(d).get("name"))))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None or old is None:
            return  # only deletions matter: Recreate waits for the old pods to be gone
        ref = controller_ref(old)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        ns = str(meta(old).get("namespace") or "")
        rs = self.rs.get(ns, str(ref.get("name")))
        owner = controller_ref(rs) if rs is not None else None
        if owner is not None and owner.get("kind") == DEPLOY_KIND:
            self.queue.add((ns, str(owner.get("name"))))

    # -- sync ---------------------------------------------------------------------------------
    def sync(self, key: Key) -> None:
        self._fresh.pop(key, None)
        d = self.deps.get(*key)
        if d is None:
            return
        selector = selector_of(d)
        if selector is None:
            return
        rss = self._claim(d)
        if deleting(d):
            self._sync_status(key, d, rss, self._find_new(d, rss))
            return
        if R.spec(d).get("paused"):
            self._paused(key, d, rss)
            return
        cond = R.get_condition(R.status(d), "Progressing")
        if cond is not None and cond.get("reason") == R.PAUSED:
            self._progress_condition(key, d, R.RESUMED, "Deployment is resumed", status="Unknown")
        if R.is_rolling(d):
            self._rolling(key, d, rss)
        else:
            self._recreate(key, d, rss)

    def _claim(self, d: Obj) -> list[Obj]:
        ns = str(meta(d).get("namespace") or "")
        sel = selector_of(d)
        out = []
        for rs in self.rs.objects(ns):
            if is_owned_by(rs, d, DEPLOY_KIND):
                out.append(rs)
            elif controller_ref(rs) is None and sel is not None and sel.matches(labels_of(rs)) and \
                    not deleting(rs) and not deleting(d):
                refs = list(meta(rs).get("ownerReferences") or []) + [owner_reference(d, DEPLOY_API, DEPLOY_KIND)]
                try:
                    out.append(self.registry.patch("replicasets", ns, str(meta(rs).get("name")),
                                                   "application/merge-patch+json",
                                                   {"metadata": {"ownerReferences": refs, "uid": uid_of(rs),
                                                                 "resourceVersion": meta(rs).get("resourceVersion")}}))
                except ApiError as exc:
                    if exc.code not in (404, 409):
                        raise
        return sorted(out, key=created_at)

    def _find_new(self, d: Obj, rss: list[Obj]) -> Obj | None:
        template = R.spec(d).get("template")
        return next((rs for rs in rss if equal_ignore_hash(R.spec(rs).get("template"), template)), None)

    # -- strategies ---------------------------------------------------------------------------
    def _rolling(self, key: Key, d: Obj, rss: list[Obj]) -> None:
        new_rs = self._new_rs(key, d, rss)
        if new_rs is None:
            return
        old = [rs for rs in rss if uid_of(rs) != uid_of(new_rs)]
        want, cur = R.replicas(d), R.replicas(new_rs)
        if cur != want:
            target = want if cur > want else R.new_rs_replicas(d, old + [new_rs], cur)
            if target != cur:
                new_rs = self._scale(key, d, new_rs, target)
                self._sync_status(key, d, old + [new_rs], new_rs)
                return
        old, scaled = self._scale_down_old(key, d, old, new_rs)
        if not scaled and R.complete(d, R.rollout_status(self._dep(key, d), old + [new_rs], new_rs, self.clock())):
            self._cleanup(d, old)
        self._sync_status(key, d, old + [new_rs], new_rs)

    def _scale_down_old(self, key: Key, d: Obj, old: list[Obj], new_rs: Obj) -> tuple[list[Obj], bool]:
        """``reconcileOldReplicaSets``: the old ReplicaSets (updated) and whether any was scaled."""
        if R.sum_spec(old) == 0:
            return old, False
        old = list(old)
        min_available = R.replicas(d) - R.max_unavailable(d)
        new_unavailable = R.replicas(new_rs) - int(R.status(new_rs).get("availableReplicas") or 0)
        budget = R.sum_spec(old + [new_rs]) - min_available - new_unavailable
        if budget <= 0:
            return old, False
        scaled = 0
        for i, rs in enumerate(old):  # unhealthy replicas first, oldest ReplicaSet first
            if scaled >= budget:
                break
            unhealthy = R.replicas(rs) - int(R.status(rs).get("availableReplicas") or 0)
            if R.replicas(rs) == 0 or unhealthy <= 0:
                continue
            n = min(budget - scaled, unhealthy)
            old[i] = self._scale(key, d, rs, R.replicas(rs) - n)
            scaled += n
        available = R.sum_status(old + [new_rs], "availableReplicas")
        if available > min_available:
            total, done = available - min_available, 0
            for i, rs in enumerate(old):
                if done >= total:
                    break
                if R.replicas(rs) == 0:
                    continue
                n = min(R.replicas(rs), total - done)
                old[i] = self._scale(key, d, rs, R.replicas(rs) - n)
                done += n
            scaled += done
        return old, scaled > 0

    def _paused(self, key: Key, d: Obj, rss: list[Obj]) -> None:
        new_rs = self._find_new(d, rss)
        live = [rs for rs in rss if R.replicas(rs) > 0 or (new_rs is not None and uid_of(rs) == uid_of(new_rs))]
        if len(live) == 1 and R.replicas(live[0]) != R.replicas(d):
            scaled = self._scale(key, d, live[0], R.replicas(d))
            rss = [scaled if uid_of(rs) == uid_of(scaled) else rs for rs in rss]
            if new_rs is not None and uid_of(new_rs) == uid_of(scaled):
                new_rs = scaled
        self._sync_status(key, d, rss, new_rs, paused=True)

    def _recreate(self, key: Key, d: Obj, rss: list[Obj]) -> None:
        new_rs = self._find_new(d, rss)
        old = [rs for rs in rss if new_rs is None or uid_of(rs) != uid_of(new_rs)]
        scaled = False
        for i, rs in enumerate(old):
            if R.replicas(rs) != 0:
                old[i] = self._scale(key, d, rs, 0)
                scaled = True
        if scaled or self._old_pods_running(old):
            self._sync_status(key, d, old + ([new_rs] if new_rs is not None else []), new_rs)
            return
        new_rs = self._new_rs(key, d, rss)
        if new_rs is None:
            return
        if R.replicas(new_rs) != R.replicas(d):
            new_rs = self._scale(key, d, new_rs, R.replicas(d))
        elif R.complete(d, R.rollout_status(self._dep(key, d), old + [new_rs], new_rs, self.clock())):
            self._cleanup(d, old)
        self._sync_status(key, d, old + [new_rs], new_rs)

    def _old_pods_running(self, old: list[Obj]) -> bool:
        if not old:
            return False
        if R.sum_status(old, "replicas") > 0:
            return True
        uids = {uid_of(rs) for rs in old}
        for pod in self.pods.by_index("namespace", str(meta(old[0]).get("namespace") or "")):
            ref = controller_ref(pod)
            if ref is not None and ref.get("uid") in uids and \
                    (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                return True
        return False

    # -- the new ReplicaSet -------------------------------------------------------------------
    def _new_rs(self, key: Key, d: Obj, rss: list[Obj]) -> Obj | None:
        """``getNewReplicaSet``: the new ReplicaSet with its annotations up to date,
        created if absent (None after a hash collision: synced again)."""
        new_rs = self._find_new(d, rss)
        rev = max((R.revision(rs) for rs in rss if new_rs is None or uid_of(rs) != uid_of(new_rs)), default=0) + 1
        if new_rs is None:
            return self._create_rs(key, d, rss, rev)
        rev = max(rev, R.revision(new_rs))
        ann = self._rs_annotations(d, new_rs, rev)
        min_ready = R.spec(d).get("minReadySeconds")
        if ann != (meta(new_rs).get("annotations") or {}) or R.spec(new_rs).get("minReadySeconds") != min_ready:
            upd = copy.deepcopy(new_rs)
            upd["metadata"]["annotations"] = ann
            if min_ready is None:
                upd["spec"].pop("minReadySeconds", None)
            else:
                upd["spec"]["minReadySeconds"] = min_ready
            new_rs = self.registry.update("replicasets", key[0], str(meta(new_rs).get("name")), upd)
            self.expect(key, self.rs, new_rs)
        self._set_deployment_revision(key, d, rev)
        if R.get_condition(R.status(self._dep(key, d)), "Progressing") is None and R.deadline(d) is not None:
            self._progress_condition(key, d, R.FOUND_NEW_RS, f'Found new replica set "{meta(new_rs).get("name")}"')
        return new_rs

    def _rs_annotations(self, d: Obj, rs: Obj | None, rev: int) -> dict[str, str]:
        return rs_annotations(d, rs, rev)

    def _create_rs(self, key: Key, d: Obj, rss: list[Obj], rev: int) -> Obj | None:
        collisions = R.status(d).get("collisionCount")
        replicas = R.new_rs_replicas(d, rss, 0)
        rs = new_replicaset(d, replicas, self._rs_annotations(d, None, rev))
        name = str(rs["metadata"]["name"])
        try:
            created = self.registry.create("replicasets", key[0], rs)
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                raise
            existing = self.registry.get("replicasets", key[0], name)
            if is_owned_by(existing, d, DEPLOY_KIND) and equal_ignore_hash(R.spec(existing).get("template"),
                                                                           R.spec(d).get("template")):
                return existing  # our own, not yet in the cache
            new = copy.deepcopy(self._dep(key, d))
            new.setdefault("status", {})["collisionCount"] = int(collisions or 0) + 1
            self._wrote(key, self.registry.update("deployments", key[0], key[1], new, subresource="status"))
            self.queue.add(key)
            return None
        self.expect(key, self.rs, created)
        if replicas > 0:
            self.recorder.event(d, NORMAL, "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {replicas}")
        self._set_deployment_revision(key, d, rev)
        if R.deadline(d) is not None:
            self._progress_condition(key, d, R.NEW_RS_CREATED, f'Created new replica set "{name}"')
        return created

    # -- writes of the Deployment ---------------------------------------------------------------
    def _dep(self, key: Key, d: Obj) -> Obj:
        """The Deployment as this sync last wrote it (the cache may not have it yet)."""
        mine = self._fresh.get(key)
        return mine if mine is not None and rv_of(mine) > rv_of(d) else d

    def _wrote(self, key: Key, out: Obj) -> None:
        self._fresh[key] = out
        self.expect(key, self.deps, out)

    def _set_deployment_revision(self, key: Key, d: Obj, rev: int) -> None:
        if (meta(self._dep(key, d)).get("annotations") or {}).get(R.REVISION) == str(rev):
            return
        self._wrote(key, self.registry.patch("deployments", key[0], key[1], "application/merge-patch+json",
                                             {"metadata": {"annotations": {R.REVISION: str(rev)}}}))

    def _progress_condition(self, key: Key, d: Obj, reason: str, message: str, status: str = "True") -> None:
        cur = copy.deepcopy(self._dep(key, d))
        st = cur.setdefault("status", {})
        R.set_condition(st, R.new_condition("Progressing", status, reason, message, self.clock()))
        self._wrote(key, self.registry.update("deployments", key[0], key[1], cur, subresource="status"))

    # -- scaling, cleanup, status -------------------------------------------------------------
    def _scale(self, key: Key, d: Obj, rs: Obj, n: int) -> Obj:
        cur = R.replicas(rs)
        new = copy.deepcopy(rs)
        new["spec"]["replicas"] = n
        ann = new["metadata"].setdefault("annotations", {})
        ann[R.DESIRED_REPLICAS] = str(R.replicas(d))
        ann[R.MAX_REPLICAS] = str(R.replicas(d) + R.max_surge(d))
        out = self.registry.update("replicasets", key[0], str(meta(rs).get("name")), new)
        self.expect(key, self.rs, out)
        if n != cur:
            self.recorder.event(d, NORMAL, "ScalingReplicaSet", f"Scaled {'up' if n > cur else 'down'} replica set "
                                f"{meta(rs).get('name')} from {cur} to {n}")
        return out

    def _cleanup(self, d: Obj, old: list[Obj]) -> None:
        limit = R.spec(d).get("revisionHistoryLimit")
        if limit is None:
            return
        alive = sorted((rs for rs in old if not deleting(rs)), key=lambda rs: (R.revision(rs), created_at(rs)))
        for rs in alive[:max(0, len(alive) - int(limit))]:
            st = R.status(rs)
            if int(st.get("replicas") or 0) or R.replicas(rs) or \
                    int(meta(rs).get("generation") or 1) > int(st.get("observedGeneration") or 0):
                continue
            try:
                self.registry.delete("replicasets", meta(rs).get("namespace"), str(meta(rs).get("name")),
                                     {"preconditions": {"uid": uid_of(rs)}})
            except ApiError as exc:
                if exc.code not in (404, 409):
                    raise

    def _sync_status(self, key: Key, d: Obj, rss: list[Obj], new_rs: Obj | None, paused: bool = False) -> None:
        now = self.clock()
        d = self._dep(key, d)
        st = R.calculate_status(d, rss, new_rs, now) if paused else R.rollout_status(d, rss, new_rs, now)
        if paused and R.deadline(d) is not None:
            R.set_condition(st, R.new_condition("Progressing", "Unknown", R.PAUSED, "Deployment is paused", now))
        recheck = R.stuck_recheck(d, st, now)
        if recheck is not None:
            self.queue.add_after(key, recheck)
        if st == R.status(d):
            return
        new = copy.deepcopy(d)
        new["status"] = st
        self._wrote(key, self.registry.update("deployments", key[0], key[1], new, subresource="status"))
