"""``Informer``: a local, always-current copy of one kind of object (client-go's reflector
and informer, reduced to what the scheduler needs).

    list (paginated) ──► replace the store ──► watch from the list's resourceVersion
         ▲                                          │ ADDED / MODIFIED / DELETED: store + callbacks
         │ 410 Gone (compacted)                     │ BOOKMARK: remember its resourceVersion
         └──────────────────────────────────────────┤ stream ended: watch again from the last one
                          connection lost, 5xx ─────┘ back off, then watch again (resume)

A re-list turns into callbacks against the old store: objects that disappeared are
deletes with ``final_state_unknown`` (their last known state may be stale), new ones are
adds, changed ones (another resourceVersion) updates. An object re-created under the same
name (another uid) is a delete and an add, never an update. Objects are decoded with
:mod:`kubesched.api`; one that fails to decode is logged and skipped (the previous
version, if any, stays), never fatal. A callback that raises is logged, never fatal.

Callbacks run in the informer's thread while it holds ``lock`` (pass the scheduler's lock
so a store change and its handler are atomic with respect to scheduling cycles).
A server without the resource (404, e.g. no PodGroup CRD) leaves an optional informer
empty and synced; it looks again every ``absent_retry`` seconds.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kubesched.cluster.kube.client import KubeClient, WatchConnection, backoff_delays
from kubesched.cluster.kube.errors import ApiStatusError, KubeClientError, TransportError
from kubesched.cluster.kube.resources import ApiResource

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(slots=True)
class _Entry(Generic[T]):
    obj: T
    rv: str


@dataclass(slots=True)
class InformerStats:
    lists: int = 0
    watches: int = 0
    events: int = 0
    bookmarks: int = 0
    gone: int = 0  # 410s: the resourceVersion was compacted, a re-list followed
    errors: int = 0
    decode_errors: int = 0


class _Gone(Exception):
    pass


def object_key(raw: dict[str, Any]) -> str:
    meta = raw.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


class Informer(Generic[T]):
    def __init__(self, client: KubeClient, resource: ApiResource, *,
                 on_add: Callable[[T], None] | None = None,
                 on_update: Callable[[T, T], None] | None = None,
                 on_delete: Callable[[T, bool], None] | None = None,
                 lock: threading.RLock | None = None, page_size: int = 500,
                 watch_timeout: tuple[int, int] = (300, 600), backoff: tuple[float, float, float] = (0.4, 2.0, 30.0),
                 absent_retry: float = 60.0) -> None:
        self.client = client
        self.resource = resource
        self.on_add, self.on_update, self.on_delete = on_add, on_update, on_delete
        self.lock = lock if lock is not None else threading.RLock()
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.backoff = backoff
        self.absent_retry = absent_retry
        self.stats = InformerStats()
        self.resource_version = ""
        self._store: dict[str, _Entry[T]] = {}
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._conn: WatchConnection | None = None
        self._thread: threading.Thread | None = None

    # -- reading ---------------------------------------------------------------------------
    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    def get(self, key: str) -> T | None:
        e = self._store.get(key)
        return None if e is None else e.obj

    def get_namespaced(self, namespace: str, name: str) -> T | None:
        return self.get(f"{namespace}/{name}" if namespace else name)

    def values(self) -> list[T]:
        """Every object in the store (a copy of the list)."""
        return [e.obj for e in list(self._store.values())]

    def __len__(self) -> int:
        return len(self._store)

    # -- running ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.resource.plural}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None:
            conn.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        delays = backoff_delays(*self.backoff)
        need_list = True
        failures = 0
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list_and_replace()
                    need_list = False
                if self._watch_once():
                    delays, failures = backoff_delays(*self.backoff), 0
                    continue
                delay = next(delays)  # an empty, short-lived watch: do not spin
            except _Gone:
                self.stats.gone += 1
                log.info("%s: resourceVersion %s is too old, re-listing", self.resource.plural, self.resource_version)
                need_list = True
                continue
            except ApiStatusError as exc:
                if exc.gone:
                    self.stats.gone += 1
                    need_list = True
                    continue
                if exc.not_found and self.resource.optional:
                    self._absent()
                    need_list = True
                    self._stop.wait(self.absent_retry)
                    continue
                failures += 1
                self.stats.errors += 1
                delay = next(delays)
                log.warning("%s: %s; retrying in %.1fs", self.resource.plural, exc, delay)
            except TransportError as exc:
                failures += 1
                self.stats.errors += 1
                delay = next(delays)
                level = logging.WARNING if failures > 3 else logging.INFO
                log.log(level, "%s: %s; retrying in %.1fs", self.resource.plural, exc, delay)
            except Exception:  # noqa: BLE001 - an informer must survive anything
                failures += 1
                self.stats.errors += 1
                delay = next(delays)
                need_list = True
                log.exception("%s informer failed; re-listing in %.1fs", self.resource.plural, delay)
            self._stop.wait(delay)

    # -- list ------------------------------------------------------------------------------
    def _list_pages(self) -> tuple[list[dict[str, Any]], str]:
        items: list[dict[str, Any]] = []
        cont = ""
        limit = self.page_size
        while True:
            query = {"limit": str(limit)} if limit else {}
            if cont:
                query["continue"] = cont
            if self.resource.field_selector:
                query["fieldSelector"] = self.resource.field_selector
            try:
                body = self.client.request("GET", self.resource.path, query=query, timeout=120.0)
            except ApiStatusError as exc:
                if exc.gone and cont:  # the continue token expired: list again, in one page
                    items, cont, limit = [], "", 0
                    continue
                raise
            meta = body.get("metadata") or {}
            items.extend(body.get("items") or [])
            cont = meta.get("continue") or ""
            if not cont:
                return items, str(meta.get("resourceVersion") or "")

    def _decode(self, raw: dict[str, Any], prev: _Entry[T] | None = None) -> T | None:
        """``prev``: the stored version of the object, if any (the resource may decode
        the new one from it)."""
        try:
            if prev is not None and self.resource.redecode is not None:
                return self.resource.redecode(prev.obj, raw)  # type: ignore[no-any-return]
            return self.resource.decode(raw)  # type: ignore[no-any-return]
        except Exception as exc:  # noqa: BLE001 - bad objects are skipped, whatever the error
            self.stats.decode_errors += 1
            log.warning("%s %s: cannot decode, skipped: %s", self.resource.kind, object_key(raw), exc)
            return None

    def _list_and_replace(self) -> None:
        raws, rv = self._list_pages()
        self.stats.lists += 1
        with self.lock:
            old = self._store
            new: dict[str, _Entry[T]] = {}
            for raw in raws:
                key = object_key(raw)
                item_rv = str((raw.get("metadata") or {}).get("resourceVersion") or "")
                prev = old.get(key)
                if prev is not None and prev.rv == item_rv:
                    new[key] = prev
                    continue
                obj = self._decode(raw, prev)
                if obj is not None:
                    new[key] = _Entry(obj, item_rv)
                elif prev is not None:
                    new[key] = prev
            self._store = new
            for key, entry in old.items():
                if key not in new:
                    self._call(self.on_delete, entry.obj, True)
            for key, entry in new.items():
                prev = old.get(key)
                if prev is None:
                    self._call(self.on_add, entry.obj)
                elif prev is not entry:
                    self._changed(prev.obj, entry.obj, True)
            self.resource_version = rv
        self._synced.set()
        log.debug("%s: listed %d at resourceVersion %s", self.resource.plural, len(new), rv)

    def _absent(self) -> None:
        """The server does not serve the resource: an empty, synced store."""
        with self.lock:
            old, self._store = self._store, {}
            for entry in old.values():
                self._call(self.on_delete, entry.obj, True)
        if not self._synced.is_set():
            log.info("%s are not served by this API server; continuing without them", self.resource.plural)
        self._synced.set()

    # -- watch -----------------------------------------------------------------------------
    def _watch_once(self) -> bool:
        """Watch until the stream ends; True if it was worth it (events, or it lasted)."""
        timeout = random.randint(*self.watch_timeout)
        query = {"resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(timeout)}
        if self.resource.field_selector:
            query["fieldSelector"] = self.resource.field_selector
        started = time.monotonic()
        conn = self.client.watch(self.resource.path, query, read_timeout=timeout + 30.0)
        self._conn = conn
        self.stats.watches += 1
        got = 0
        try:
            if self._stop.is_set():
                return True
            for ev in conn:
                if self._stop.is_set():
                    break
                got += 1
                self._handle(ev)
        finally:
            self._conn = None
            conn.close()
        return got > 0 or time.monotonic() - started > 5.0

    def _handle(self, ev: dict[str, Any]) -> None:
        typ, raw = ev.get("type"), ev.get("object")
        if not isinstance(raw, dict):
            raise KubeClientError(f"malformed watch event: {str(ev)[:200]}")
        if typ == "ERROR":
            code = int(raw.get("code") or 500)
            if code == 410:
                raise _Gone()
            raise ApiStatusError.from_body(code, raw)
        rv = str((raw.get("metadata") or {}).get("resourceVersion") or "")
        if typ == "BOOKMARK":
            self.stats.bookmarks += 1
            if rv:
                self.resource_version = rv
            return
        self.stats.events += 1
        key = object_key(raw)
        with self.lock:
            prev = self._store.get(key)
            if typ == "DELETED":
                if prev is not None:
                    del self._store[key]
                    obj = self._decode(raw, prev)
                    self._call(self.on_delete, obj if obj is not None else prev.obj, False)
            elif typ in ("ADDED", "MODIFIED"):
                if prev is None or prev.rv != rv:
                    obj = self._decode(raw, prev)
                    if obj is not None:
                        self._store[key] = _Entry(obj, rv)
                        if prev is None:
                            self._call(self.on_add, obj)
                        else:
                            self._changed(prev.obj, obj, False)
            else:
                log.warning("%s: unknown watch event type %r", self.resource.plural, typ)
            if rv:
                self.resource_version = rv

    def _changed(self, old: T, new: T, relisted: bool) -> None:
        """An update; a different uid under the same name is another object (deleted and
        re-created while the informer was not watching): a delete, then an add."""
        if getattr(old, "uid", None) != getattr(new, "uid", None):
            self._call(self.on_delete, old, relisted)
            self._call(self.on_add, new)
        else:
            self._call(self.on_update, old, new)

    def _call(self, fn: Callable[..., None] | None, *args: Any) -> None:
        if fn is None:
            return
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - a handler's bug must not stop the informer
            log.exception("%s event handler failed", self.resource.plural)
