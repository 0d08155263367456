"""Lists as they were at an earlier revision: the pages after the first of a paginated list
(``continue``) and ``resourceVersionMatch=Exact``.

Upstream serves every page of a list from the revision of its first page (etcd keeps old
revisions), so a client paging through a changing collection sees one consistent
snapshot, and a continue token whose revision was compacted is a 410 ``Expired``. The
store keeps only current objects, plus its event log since the last compaction: the state
at revision ``rv`` is the current state with every change after ``rv`` undone (an object
added after it is left out, one modified or deleted after it is its state before that
first change). A page of ``limit`` objects after a key then needs at most ``limit`` plus
the number of changed keys current objects.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kubesched.server.store import Store
from kubesched.server.store.errors import Expired
from kubesched.server.store.txn import ListPage

Key = tuple[str, str]


def _undone(store: Store, kind: str, rv: int, upto: int) -> dict[Key, dict[str, Any] | None]:
    """For each object of ``kind`` changed in (rv, upto]: its state at ``rv`` (None: absent)."""
    watcher = store.watch([kind], rv)  # raises Expired when rv was compacted
    try:
        events, seen = watcher.drain()
        deadline = time.monotonic() + 5.0
        while seen < upto and not watcher.closed and time.monotonic() < deadline:
            more, seen = watcher.get(0.05)
            events += more
    finally:
        watcher.close()
    before: dict[Key, dict[str, Any] | None] = {}
    for ev in events:
        if ev.rv > upto:
            break
        key = (ev.namespace, ev.name)
        if key in before:
            continue  # only the first change after rv says what the object was at rv
        if ev.type == "ADDED":
            before[key] = None
        else:
            before[key] = ev.prev_obj() or ev.obj()
    return before


def _key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def list_at(store: Store, kind: str, namespace: str | None, rv: int, *, after: Key | None = None,
            limit: int = 0, predicate: Callable[[dict[str, Any]], bool] | None = None) -> ListPage:
    """A page of ``kind`` as it was at revision ``rv``. Raises :class:`Expired` when ``rv``
    is older than the store's history."""
    if rv < store.compacted_rv:
        raise Expired(f"too old resource version: {rv} ({store.compacted_rv + 1})", rv, store.compacted_rv + 1)
    fetch = 0 if not limit else limit + 1
    for attempt in range(6):
        if attempt == 5:
            fetch = 0  # writes keep displacing the page: read everything after the key once
        page = store.list(kind, namespace, after=after, limit=fetch)
        if page.rv <= rv:
            return store.list(kind, namespace, after=after, limit=limit, predicate=predicate)
        changed = _undone(store, kind, rv, page.rv)
        untouched = sum(1 for o in page.items if _key(o) not in changed)
        if not fetch or page.next_key is None or untouched > limit:
            break
        fetch = limit + len(changed) + 1  # changes displaced current objects: fetch more
    merged: dict[Key, dict[str, Any]] = {}
    for obj in page.items:
        key = _key(obj)
        if key not in changed:
            merged[key] = obj
    for key, old in changed.items():
        if old is None or (namespace is not None and key[0] != namespace):
            continue
        if after is not None and key <= after:
            continue
        if page.next_key is not None and key > page.next_key:
            continue  # beyond what this fetch covers: a later page finds it
        merged[key] = old
    keys = sorted(k for k, o in merged.items() if predicate is None or predicate(o))
    more = page.next_key is not None
    if limit and len(keys) > limit:
        keys, more = keys[:limit], True
    items = [merged[k] for k in keys]
    next_key = (keys[-1] if keys else page.next_key) if more else None
    return ListPage(items, rv, next_key)
