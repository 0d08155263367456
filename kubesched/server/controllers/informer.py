"""In-process informers: a local cache of one resource, kept current by list + watch.

Controllers inside ``kubesched serve`` read the cluster the way kube-controller-manager
does, from a cache fed by a watch, never by polling. An :class:`Informer` lists its
resource through the :class:`~kubesched.server.apiserver.registry.registry.Registry`, then watches
from the list's resourceVersion with :func:`~kubesched.server.apiserver.watch.api.open_watch`:

* a watch that ends (server shutdown of watchers, a slow consumer cut off) is resumed
  from the last revision applied; a resume that is too old (410 Gone) re-lists, and the
  difference between the cache and the new list is delivered as adds, updates and deletes;
* handlers receive ``(old, new)``: ``(None, obj)`` for an add, ``(obj, None)`` for a
  delete; they run on the informer's thread and should only enqueue work;
* :meth:`Informer.wait_for` lets a controller read its own writes: it blocks until the
  cache has applied a given resourceVersion (what upstream's "expectations" achieve).

Cached objects are shared: callers must copy before changing them. They are shared
beyond one informer: an event's object is parsed once in the process (the store event
caches its parse) and that one dictionary is what every informer of the kind caches and
hands to its handlers, and what the HTTP watches' selectors read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.watch.api import BOOKMARK, DELETED, ERROR, WatchItem, WatchStream, open_watch

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects
Handler = Callable[[Obj | None, Obj | None], None]
IndexFn = Callable[[Obj], Iterable[str]]

_WATCH_POLL = 0.5


def key_of(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def rv_of(obj: Obj | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


class Informer:
    def __init__(self, registry: Registry, resource: str, *, namespace: str | None = None,
                 field_selector: str = "", transform: Callable[[Obj], Obj] | None = None) -> None:
        self.registry = registry
        self.resource = resource
        self.namespace = namespace
        self.field_selector = field_selector
        self._transform = transform
        self._items: dict[Key, Obj] = {}
        self._indexes: dict[str, tuple[IndexFn, dict[str, set[Key]]]] = {}
        self._handlers: list[Handler] = []
        self._cond = threading.Condition(threading.RLock())
        self._rv = 0
        self.synced = threading.Event()
        self._stopping = threading.Event()
        self._stream: WatchStream | None = None
        self._thread: threading.Thread | None = None

    # -- configuration (before start) -------------------------------------------------------
    def add_handler(self, fn: Handler) -> None:
        self._handlers.append(fn)

    def add_index(self, name: str, fn: IndexFn) -> None:
        with self._cond:
            table: dict[str, set[Key]] = {}
            for k, obj in self._items.items():
                for v in fn(obj):
                    table.setdefault(v, set()).add(k)
            self._indexes[name] = (fn, table)

    # -- reads ------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> Obj | None:
        with self._cond:
            return self._items.get((namespace, name))

    def objects(self, namespace: str | None = None) -> list[Obj]:
        with self._cond:
            if namespace is None:
                return list(self._items.values())
            return [o for (ns, _), o in self._items.items() if ns == namespace]

    def by_index(self, name: str, value: str) -> list[Obj]:
        with self._cond:
            keys = self._indexes[name][1].get(value, ())
            return [self._items[k] for k in sorted(keys)]

    @property
    def rv(self) -> int:
        return self._rv

    def wait_for(self, rv: int, timeout: float = 5.0) -> bool:
        """Wait until the cache has applied revision ``rv``; False on timeout or stop."""
        with self._cond:
            return self._cond.wait_for(lambda: self._rv >= rv or self._stopping.is_set(), timeout) and \
                self._rv >= rv

    # -- running ----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.resource}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        stream = self._stream
        if stream is not None:
            stream.close()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        relist = True
        while not self._stopping.is_set():
            try:
                if relist:
                    self._relist()
                    relist = False
                self._watch()
            except ApiError as exc:
                if exc.code == 410:
                    relist = True
                    continue
                log.warning("%s informer: %s", self.resource, exc.message)
                self._stopping.wait(1.0)
            except Exception:
                if self._stopping.is_set() or self.registry.store.closed:
                    return
                log.exception("%s informer", self.resource)
                self._stopping.wait(1.0)

    def _relist(self) -> None:
        page = self.registry.list(self.resource, self.namespace, field_selector=self.field_selector)
        fresh = {}
        for raw in page["items"]:
            obj = self._transform(raw) if self._transform else raw
            fresh[key_of(obj)] = obj
        events: list[tuple[Obj | None, Obj | None]] = []
        with self._cond:
            for k, old in list(self._items.items()):
                if k not in fresh:
                    self._remove(k)
                    events.append((old, None))
            for k, obj in fresh.items():
                prev = self._items.get(k)
                if prev is None or rv_of(prev) != rv_of(obj):
                    self._put(k, obj)
                    events.append((prev, obj))
            self._rv = max(self._rv, int(page["metadata"]["resourceVersion"]))
            self._cond.notify_all()
        self._dispatch(events)
        self.synced.set()

    def _watch(self) -> None:
        stream = open_watch(self.registry, self.resource, self.namespace, resource_version=str(self._rv),
                            field_selector=self.field_selector)
        self._stream = stream
        try:
            if self._stopping.is_set():
                return
            while not self._stopping.is_set():
                items = stream.next(_WATCH_POLL)
                self._apply(items, None if stream.overflowed else stream.last_rv)
                if stream.closed and not items:
                    return  # resume from the last revision applied
        finally:
            stream.close()
            self._stream = None

    def _apply(self, items: list[WatchItem], upto: int | None) -> None:
        events: list[tuple[Obj | None, Obj | None]] = []
        with self._cond:
            for item in items:
                if item.type in (BOOKMARK, ERROR):
                    continue
                raw = item.shared_object()  # parsed once for all the informers of the process
                obj = self._transform(raw) if self._transform else raw
                k = key_of(obj)
                old = self._items.get(k)
                if item.type == DELETED:
                    if old is not None:
                        self._remove(k)
                    events.append((old or obj, None))
                else:
                    self._put(k, obj)
                    events.append((old, obj))
                self._rv = max(self._rv, item.rv)
            if upto is not None:
                self._rv = max(self._rv, upto)
            self._cond.notify_all()
        self._dispatch(events)

    def _put(self, k: Key, obj: Obj) -> None:
        old = self._items.get(k)
        if old is not None:
            self._unindex(k, old)
        self._items[k] = obj
        for fn, table in self._indexes.values():
            for v in fn(obj):
                table.setdefault(v, set()).add(k)

    def _remove(self, k: Key) -> None:
        old = self._items.pop(k)
        self._unindex(k, old)

    def _unindex(self, k: Key, obj: Obj) -> None:
        for fn, table in self._indexes.values():
            for v in fn(obj):
                keys = table.get(v)
                if keys is not None:
                    keys.discard(k)
                    if not keys:
                        del table[v]

    def _dispatch(self, events: list[tuple[Obj | None, Obj | None]]) -> None:
        for old, new in events:
            for fn in self._handlers:
                try:
                    fn(old, new)
                except Exception:  # pragma: no cover - a handler's bug must not stop the informer
                    log.exception("%s informer handler", self.resource)


def by_namespace(obj: Obj) -> list[str]:
    return [str((obj.get("metadata") or {}).get("namespace") or "")]


def by_node_name(obj: Obj) -> list[str]:
    node = (obj.get("spec") or {}).get("nodeName")
    return [str(node)] if node else []


def wait_synced(informers: Iterable[Informer], timeout: float = 30.0) -> bool:
    return all(inf.synced.wait(timeout) for inf in informers)
