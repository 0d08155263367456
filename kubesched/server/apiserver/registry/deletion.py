"""Deletion as Kubernetes does it: graceful for pods, deferred by finalizers.

* A pod bound to a node and not terminal, deleted with a grace period (the request's
  ``gracePeriodSeconds`` or its ``terminationGracePeriodSeconds``, default 30), is not
  removed: it gets ``deletionTimestamp`` (now + grace) and ``deletionGracePeriodSeconds``
  and shows as Terminating. Its kubelet (the simulated node agent) removes it with a
  grace-0 delete once its containers stop; if no one does, :func:`reap` removes it when
  the grace period ends. An unbound or terminal pod, or grace 0, is removed at once
  (upstream ``CheckGracefulDelete``).
* An object with ``metadata.finalizers`` is marked (``deletionTimestamp``) and removed by
  the update that empties its finalizers.
* Deleting a namespace removes everything in it, then the namespace (the namespace
  controller's work, done synchronously); ``default``, ``kube-system`` and ``kube-public``
  cannot be deleted.
* ``propagationPolicy`` (or the older ``orphanDependents``) sets the garbage
  collector's finalizers as upstream's ``deletionFinalizersForGarbageCollection``:
  ``Foreground`` adds ``foregroundDeletion``, ``Orphan`` adds ``orphan``, ``Background``
  removes both (absent: the object's own finalizers decide; the default is background).
  Removing dependents (``ownerReferences``) is the garbage collector's job, a controller
  that runs beside the API server (``kubesched/server/controllers``).
"""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.registry.dryrun import DryRun
from kubesched.server.apiserver.registry.resources import Resource
from kubesched.server.apiserver.strategies.base import parse_rfc3339, rfc3339
from kubesched.server.store import StoreError, Txn
from kubesched.server.store import errors as store_errors

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry

log = logging.getLogger(__name__)

IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
_TERMINAL = ("Succeeded", "Failed")
GC_ORPHAN, GC_FOREGROUND = "orphan", "foregroundDeletion"
MAX_GRACE_SECONDS = 2**31 - 1


def pod_grace_period(pod: dict[str, Any], options: dict[str, Any]) -> int:
    spec = pod.get("spec") or {}
    if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in _TERMINAL:
        return 0
    grace = options.get("gracePeriodSeconds")
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", 30)
    try:
        grace = int(grace)
    except (TypeError, ValueError):
        raise E.bad_request(f"invalid gracePeriodSeconds {grace!r}") from None
    # Go computes now + grace*time.Second in int64 nanoseconds, which wraps beyond ~292
    # years; a period longer than MAX_GRACE_SECONDS (68 years) is taken as that long
    return 1 if grace < 0 else min(grace, MAX_GRACE_SECONDS)


def _check_preconditions(res: Resource, cur: dict[str, Any], options: dict[str, Any]) -> None:
    pre = options.get("preconditions") or {}
    meta = cur.get("metadata") or {}
    name = str(meta.get("name"))
    if pre.get("uid") and pre["uid"] != meta.get("uid"):
        raise E.conflict(res.plural, res.group, name, f"Precondition failed: UID in precondition: "
                         f"{pre['uid']}, UID in object meta: {meta.get('uid')}")
    if pre.get("resourceVersion") and str(pre["resourceVersion"]) != str(meta.get("resourceVersion")):
        raise E.conflict(res.plural, res.group, name, "Precondition failed: ResourceVersion in "
                         f"precondition: {pre['resourceVersion']}, ResourceVersion in object meta: "
                         f"{meta.get('resourceVersion')}")


def gc_finalizers(existing: list[str], options: dict[str, Any]) -> list[str]:
    """The finalizers after a delete with ``options``: the garbage collector's ones
    (``orphan``, ``foregroundDeletion``) as the propagation policy asks."""
    policy, orphan_opt = options.get("propagationPolicy"), options.get("orphanDependents")
    if orphan_opt is not None:
        orphan, foreground = bool(orphan_opt), False
    elif policy in ("Orphan", "Background", "Foreground"):
        orphan, foreground = policy == "Orphan", policy == "Foreground"
    else:
        orphan, foreground = GC_ORPHAN in existing, GC_FOREGROUND in existing
    out = [f for f in existing if f not in (GC_ORPHAN, GC_FOREGROUND)]
    out += [GC_ORPHAN] if orphan else []
    out += [GC_FOREGROUND] if foreground else []
    return existing if set(out) == set(existing) else out


def delete_in_txn(reg: "Registry", tx: Txn, res: Resource, ns: str, name: str,
                  options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    cur = tx.get(res.storage, ns, name)
    if cur is None:
        raise E.not_found(res.plural, res.group, name)
    _check_preconditions(res, cur, options)
    meta = cur["metadata"]
    old_finalizers = meta.get("finalizers") or []
    finalizers = gc_finalizers(old_finalizers, options)
    grace = pod_grace_period(cur, options) if res.storage == "core/pods" else None
    if grace or finalizers:
        now = reg.clock()
        old_grace = meta.get("deletionGracePeriodSeconds")
        if meta.get("deletionTimestamp") and (grace is None or (old_grace is not None and grace >= old_grace)):
            if finalizers == old_finalizers:
                return cur, False  # deletion already in progress, not shortened
            new = copy.deepcopy(cur)
            new["metadata"]["finalizers"] = finalizers
            return tx.update(res.storage, ns, name, new), False
        new = copy.deepcopy(cur)
        if finalizers != old_finalizers:
            new["metadata"]["finalizers"] = finalizers
        new["metadata"]["deletionTimestamp"] = rfc3339(now + (grace or 0))
        new["metadata"]["deletionGracePeriodSeconds"] = grace or 0
        expires = now + grace if grace and not finalizers else None
        return tx.update(res.storage, ns, name, new, expires=expires), False
    return tx.delete(res.storage, ns, name), True


def delete_one(reg: "Registry", res: Resource, ns: str, name: str,
               options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    if res.storage == "core/namespaces":
        return _delete_namespace(reg, res, name, options)
    try:
        with reg.store.txn() as tx:
            obj, removed = delete_in_txn(reg, tx, res, ns, name, options)
            if options.get("dryRun"):
                raise DryRun(obj)
    except DryRun as d:
        return reg.view(res, d.obj), False
    except StoreError as exc:
        raise E.from_store_error(exc, res.plural, res.group, name) from None
    return reg.view(res, obj), removed


def _delete_namespace(reg: "Registry", res: Resource, name: str,
                      options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    if name in IMMORTAL_NAMESPACES:
        raise E.forbidden("namespaces", "", name, "this namespace may not be deleted")
    try:
        with reg.store.txn() as tx:
            cur = tx.get("core/namespaces", "", name)
            if cur is None:
                raise E.not_found("namespaces", "", name)
            _check_preconditions(res, cur, options)
            if options.get("dryRun"):
                return reg.view(res, cur), False
            for kind in tx.kinds_in_namespace(name):
                for obj in tx.list(kind, name):
                    tx.delete(kind, name, obj["metadata"]["name"])
            return reg.view(res, tx.delete("core/namespaces", "", name)), True
    except StoreError as exc:
        raise E.from_store_error(exc, "namespaces", "", name) from None


def write_update(reg: "Registry", tx: Txn, res: Resource, new: dict[str, Any],
                 cur: dict[str, Any]) -> dict[str, Any]:
    """Store an update; an update that empties the finalizers of an object being deleted
    removes it (a pod: when its grace period has also ended)."""
    meta = new["metadata"]
    ns, name = str(meta.get("namespace") or ""), str(meta["name"])
    if meta.get("deletionTimestamp") and not meta.get("finalizers") and (cur["metadata"].get("finalizers")):
        if res.storage == "core/pods":
            when = parse_rfc3339(str(meta["deletionTimestamp"])) or reg.clock()
            if when > reg.clock():
                return tx.update(res.storage, ns, name, new, expires=when)
        tx.delete(res.storage, ns, name)
        return new
    return tx.update(res.storage, ns, name, new)


def reap(reg: "Registry") -> int:
    """Remove the pods whose graceful deletion period has ended; return how many."""
    n = 0
    for kind, ns, name in reg.store.expired(reg.clock()):
        try:
            with reg.store.txn() as tx:
                cur = tx.get(kind, ns, name)
                if cur is None or (cur.get("metadata") or {}).get("finalizers"):
                    continue
                tx.delete(kind, ns, name)
                n += 1
        except store_errors.StoreError as exc:  # pragma: no cover - raced with a client
            log.debug("reaping %s %s/%s: %s", kind, ns, name, exc)
    return n
