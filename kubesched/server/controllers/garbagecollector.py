"""The garbage collector: delete what lost its owners, as upstream's ``pkg/controller/garbagecollector``.

It keeps a graph of every object's ``metadata.ownerReferences`` (metadata-only informers
over every deletable resource but events and namespaces) and acts on three cases:

* **background** (``kubectl delete`` by default): the owner is gone, so each dependent
  whose owners are now all absent is deleted; a dependent with some owner still present
  only loses the references to the absent ones. Absence is confirmed with a live read
  (a missing object, or one with another uid), never guessed from the cache;
* **foreground** (``propagationPolicy=Foreground``): the API server gave the owner the
  ``foregroundDeletion`` finalizer; its dependents are deleted (those that have
  dependents of their own, in the foreground too), and once no dependent that has
  ``blockOwnerDeletion`` remains, the finalizer is removed and the owner goes;
* **orphan** (``propagationPolicy=Orphan``): the ``orphan`` finalizer; the owner's uid is
  removed from its dependents' owner references, then the finalizer.

Deletions are sent with a uid precondition, so an object recreated under the same name
is never collected by mistake.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.resources import TABLE, Resource
from kubesched.server.controllers.base import Controller, deleting, meta, uid_of
from kubesched.server.controllers.informer import Informer, Obj, wait_synced

log = logging.getLogger(__name__)

ORPHAN, FOREGROUND = "orphan", "foregroundDeletion"
_SKIP = ("events", "namespaces")


def collected_resources() -> list[Resource]:
    return [r for r in TABLE.resources if r.plural not in _SKIP and "delete" in r.verbs and "watch" in r.verbs]


def resource_for(api_version: Any, kind: Any) -> Resource | None:
    group = str(api_version or "").rpartition("/")[0]
    for r in TABLE.resources:
        if r.group == group and r.kind == kind:
            return r
    return None


def metadata_only(obj: Obj) -> Obj:
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": obj.get("metadata") or {}}


@dataclass(slots=True)
class GNode:
    res: Resource
    namespace: str
    name: str
    uid: str
    owners: list[dict[str, Any]]
    finalizers: tuple[str, ...]
    deleting: bool
    dependents: set[str] = field(default_factory=set)

    def owner_uids(self) -> set[str]:
        return {str(r.get("uid")) for r in self.owners}


class GarbageCollector(Controller[str]):
    name = "garbage-collector"

    def __init__(self, registry: Registry, *, workers: int = 2) -> None:
        super().__init__(workers)
        self.registry = registry
        self._lock = threading.Lock()
        self._nodes: dict[str, GNode] = {}
        self._dependents: dict[str, set[str]] = {}  # owner uid -> dependent uids
        self.informers: list[Informer] = []
        for res in collected_resources():
            inf = Informer(registry, f"{res.plural}.{res.group}" if res.group else res.plural,
                           transform=metadata_only)
            inf.add_handler(self._handler(res))
            self.informers.append(inf)

    def start(self) -> None:
        for inf in self.informers:
            inf.start()
        wait_synced(self.informers)
        super().start()

    def stop(self) -> None:
        super().stop()
        for inf in self.informers:
            inf.stop()

    # -- the graph ----------------------------------------------------------------------------
    def _handler(self, res: Resource) -> Callable[[Obj | None, Obj | None], None]:
        return lambda old, new: self._on_event(res, old, new)

    def _on_event(self, res: Resource, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            assert old is not None
            self._removed(uid_of(old))
            return
        m = meta(new)
        owners = [r for r in m.get("ownerReferences") or [] if isinstance(r, dict)]
        finalizers = tuple(m.get("finalizers") or ())
        if old is not None and not deleting(new) and self._unchanged(uid_of(new), owners, finalizers):
            return  # a status update (most events): the graph has this very node, nothing to do
        node = GNode(res, str(m.get("namespace") or ""), str(m.get("name")), uid_of(new), owners, finalizers,
                     deleting(new))
        with self._lock:
            prev = self._nodes.get(node.uid)
            if prev is not None:
                node.dependents = prev.dependents
                for o in prev.owner_uids() - node.owner_uids():
                    self._dependents.get(o, set()).discard(node.uid)
            node.dependents = self._dependents.setdefault(node.uid, node.dependents)
            self._nodes[node.uid] = node
            for o in node.owner_uids():
                self._dependents.setdefault(o, set()).add(node.uid)
            suspicious = any(o not in self._nodes or self._waiting(self._nodes[o]) for o in node.owner_uids())
        if suspicious or (node.deleting and (FOREGROUND in node.finalizers or ORPHAN in node.finalizers)):
            self.queue.add(node.uid)
        if node.deleting and FOREGROUND in node.finalizers:
            for dep in list(node.dependents):
                self.queue.add(dep)

    def _unchanged(self, uid: str, owners: list[dict[str, Any]], finalizers: tuple[str, ...]) -> bool:
        """Whether the graph's node ``uid`` (not being deleted) has these owners and finalizers
        and is not waiting on an owner (which an update re-queues): replacing it would change nothing."""
        with self._lock:
            prev = self._nodes.get(uid)
            if prev is None or prev.deleting or prev.owners != owners or prev.finalizers != finalizers:
                return False
            return not any(o not in self._nodes or self._waiting(self._nodes[o]) for o in prev.owner_uids())

    def _removed(self, uid: str) -> None:
        with self._lock:
            node = self._nodes.pop(uid, None)
            deps = list(self._dependents.pop(uid, set()))
            owners = node.owner_uids() if node is not None else set()
            for o in owners:
                self._dependents.get(o, set()).discard(uid)
        for dep in deps:
            self.queue.add(dep)
        for o in owners:  # an owner waiting for its dependents may be done now
            self.queue.add(o)

    @staticmethod
    def _waiting(node: GNode) -> bool:
        return node.deleting and FOREGROUND in node.finalizers

    # -- work ---------------------------------------------------------------------------------
    def sync(self, uid: str) -> None:
        with self._lock:
            node = self._nodes.get(uid)
        if node is None:
            return
        try:
            latest = self.registry.get(node.res, node.namespace or None, node.name)
        except ApiError as exc:
            if exc.code == 404:
                return
            raise
        if uid_of(latest) != uid:
            return
        finalizers = meta(latest).get("finalizers") or []
        if deleting(latest):
            if ORPHAN in finalizers:
                self._orphan_dependents(node, latest)
            elif FOREGROUND in finalizers:
                self._process_deleting_dependents(node, latest)
            return
        self._attempt_to_delete(node, latest)

    def _classify(self, node: GNode, refs: list[dict[str, Any]]) -> tuple[list[Any], list[Any], list[Any]]:
        solid, dangling, waiting = [], [], []
        for ref in refs:
            with self._lock:
                known = self._nodes.get(str(ref.get("uid")))
            if known is not None and not self._waiting(known):
                solid.append(ref)
                continue
            res = resource_for(ref.get("apiVersion"), ref.get("kind"))
            if res is None:
                solid.append(ref)  # a kind this server does not serve: never collect on its account
                continue
            try:
                owner = self.registry.get(res, node.namespace if res.namespaced else None, str(ref.get("name")))
            except ApiError as exc:
                if exc.code != 404:
                    raise
                dangling.append(ref)
                continue
            if uid_of(owner) != ref.get("uid"):
                dangling.append(ref)
            elif deleting(owner) and FOREGROUND in (meta(owner).get("finalizers") or []):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def _attempt_to_delete(self, node: GNode, latest: Obj) -> None:
        refs = [r for r in meta(latest).get("ownerReferences") or [] if isinstance(r, dict)]
        if not refs:
            return
        solid, dangling, waiting = self._classify(node, refs)
        if solid:
            if dangling or waiting:
                gone = {str(r.get("uid")) for r in dangling + waiting}
                self._set_owner_refs(node, latest, [r for r in refs if str(r.get("uid")) not in gone])
            return
        if waiting and node.dependents:
            policy = "Foreground"
        elif ORPHAN in (meta(latest).get("finalizers") or []):
            policy = "Orphan"
        elif FOREGROUND in (meta(latest).get("finalizers") or []):
            policy = "Foreground"
        else:
            policy = "Background"
        log.info("garbage collecting %s %s/%s (%s)", node.res.kind, node.namespace, node.name, policy)
        try:
            self.registry.delete(node.res, node.namespace or None, node.name,
                                 {"propagationPolicy": policy, "preconditions": {"uid": node.uid}})
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise

    def _process_deleting_dependents(self, node: GNode, latest: Obj) -> None:
        blocking = []
        with self._lock:
            for dep_uid in node.dependents:
                dep = self._nodes.get(dep_uid)
                if dep is None:
                    continue
                if any(r.get("uid") == node.uid and r.get("blockOwnerDeletion") for r in dep.owners):
                    blocking.append(dep)
        if not blocking:
            self._remove_finalizer(node, latest, FOREGROUND)
            return
        for dep in blocking:
            if not self._waiting(dep):
                self.queue.add(dep.uid)

    def _orphan_dependents(self, node: GNode, latest: Obj) -> None:
        with self._lock:
            deps = [self._nodes[d] for d in node.dependents if d in self._nodes]
        for dep in deps:
            try:
                cur = self.registry.get(dep.res, dep.namespace or None, dep.name)
            except ApiError as exc:
                if exc.code == 404:
                    continue
                raise
            refs = [r for r in meta(cur).get("ownerReferences") or [] if r.get("uid") != node.uid]
            if uid_of(cur) == dep.uid and len(refs) != len(meta(cur).get("ownerReferences") or []):
                self._set_owner_refs(dep, cur, refs)
        self._remove_finalizer(node, latest, ORPHAN)

    # -- writes -------------------------------------------------------------------------------
    def _set_owner_refs(self, node: GNode, latest: Obj, refs: list[dict[str, Any]]) -> None:
        patch = {"metadata": {"ownerReferences": refs or None, "uid": node.uid,
                              "resourceVersion": meta(latest).get("resourceVersion")}}
        self.registry.patch(node.res, node.namespace or None, node.name, "application/merge-patch+json", patch)

    def _remove_finalizer(self, node: GNode, latest: Obj, finalizer: str) -> None:
        rest = [f for f in meta(latest).get("finalizers") or [] if f != finalizer]
        patch = {"metadata": {"finalizers": rest or None, "uid": node.uid,
                              "resourceVersion": meta(latest).get("resourceVersion")}}
        try:
            self.registry.patch(node.res, node.namespace or None, node.name, "application/merge-patch+json", patch)
        except ApiError as exc:
            if exc.code != 404:
                raise
