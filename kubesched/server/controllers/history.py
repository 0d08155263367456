"""ControllerRevisions: the template history of DaemonSets and StatefulSets, so
``kubectl rollout history ds/x`` lists revisions and ``kubectl rollout undo`` restores one
(upstream ``pkg/controller/history`` and the daemon/stateful set controllers' use of it).

A revision is named ``<owner>-<template hash>`` (the hash the pods' ``controller-revision-hash``
label carries), labelled with the template's labels plus that hash, owned by its controller,
and holds what kubectl's rollbacker applies as a strategic merge patch:
``{"spec": {"template": {..., "$patch": "replace"}}}``. Its ``revision`` is one more than the
highest so far; when the template returns to an earlier one (an undo) that revision is
renumbered to the new highest instead of being duplicated. Revisions beyond
``revisionHistoryLimit`` that no live pod uses are deleted, oldest first.
"""

from __future__ import annotations

from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import meta, owner_reference, uid_of
from kubesched.server.controllers.informer import Informer, Obj, by_namespace

RESOURCE = "controllerrevisions.apps"
REVISION_LABEL = "controller-revision-hash"


def revision_data(template: Obj) -> dict[str, Any]:
    """The patch that restores ``template`` (upstream ``getPatch``)."""
    return {"spec": {"template": {**template, "$patch": "replace"}}}


def _number(rev: Obj) -> int:
    try:
        return int(rev.get("revision") or 0)
    except (TypeError, ValueError):
        return 0


class History:
    def __init__(self, registry: Registry, revisions: Informer) -> None:
        self.registry = registry
        self.revisions = revisions
        revisions.add_index("namespace", by_namespace)

    def owned(self, owner: Obj) -> list[Obj]:
        uid = uid_of(owner)
        out = []
        for rev in self.revisions.by_index("namespace", str(meta(owner).get("namespace") or "")):
            refs = meta(rev).get("ownerReferences") or []
            if any(isinstance(r, dict) and r.get("controller") and r.get("uid") == uid for r in refs):
                out.append(rev)
        return sorted(out, key=_number)

    def sync(self, owner: Obj, api_version: str, kind: str, template: Obj, hash_: str,
             live_hashes: set[str]) -> Obj | None:
        """The current revision of ``owner`` (created or renumbered as needed); old ones pruned."""
        ns, owner_name = str(meta(owner).get("namespace") or ""), str(meta(owner).get("name"))
        owned = self.owned(owner)
        name = f"{owner_name}-{hash_}"
        highest = max((_number(r) for r in owned), default=0)
        current = next((r for r in owned if meta(r).get("name") == name), None)
        try:
            if current is None:
                labels = {**((template.get("metadata") or {}).get("labels") or {}), REVISION_LABEL: hash_}
                current = self.registry.create(RESOURCE, ns, {
                    "apiVersion": "apps/v1", "kind": "ControllerRevision",
                    "metadata": {"name": name, "namespace": ns, "labels": labels,
                                 "ownerReferences": [owner_reference(owner, api_version, kind)]},
                    "data": revision_data(template), "revision": highest + 1})
            elif _number(current) < highest:
                current = self.registry.update(RESOURCE, ns, name, {**current, "revision": highest + 1})
        except ApiError as exc:
            if exc.code not in (404, 409):  # a race with a delete or another write: next sync
                raise
            return None
        limit = int((owner.get("spec") or {}).get("revisionHistoryLimit", 10) or 0)
        old = [r for r in owned if meta(r).get("name") != name
               and (meta(r).get("labels") or {}).get(REVISION_LABEL) not in live_hashes]
        for rev in old[:max(0, len(old) - limit)]:
            try:
                self.registry.delete(RESOURCE, ns, str(meta(rev).get("name")), {"preconditions": {"uid": uid_of(rev)}})
            except ApiError as exc:
                if exc.code not in (404, 409):
                    raise
        return current
