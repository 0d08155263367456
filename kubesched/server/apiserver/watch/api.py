"""Watches with Kubernetes semantics over the store's change log.

:func:`open_watch` implements the ``resourceVersion`` rules of a watch request:

* unset or ``"0"``: synthetic ``ADDED`` events for the current state (one consistent
  list), then every change after it;
* ``N``: every change after revision N, replayed from the change log; a compacted N
  raises 410 Gone (``Expired``), and the client re-lists;
* ``sendInitialEvents=true`` (streaming lists): the synthetic events, then a ``BOOKMARK``
  annotated ``k8s.io/initial-events-end: "true"``.

Selectors are applied per event, with upstream's transitions: an object that starts
matching is ``ADDED``, one that stops matching is ``DELETED`` (a pod bound to node ``n1``
enters the ``spec.nodeName=n1`` watch as ADDED). :class:`WatchStream` is consumed either
by the HTTP layer (non-blocking :meth:`WatchStream.poll` with a wake-up callback) or by
in-process controllers (blocking :meth:`WatchStream.next`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.registry.resources import Resource
from kubesched.server.apiserver.registry.selectors import Predicate, predicate
from kubesched.server.apiserver.strategies.base import Strategy
from kubesched.server.store import ADDED, DELETED, MODIFIED, Expired, StoredEvent, Watcher

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry

BOOKMARK, ERROR = "BOOKMARK", "ERROR"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(slots=True)
class WatchItem:
    """One event for a client: ``data`` is the stored JSON text when it can be sent as is,
    else ``obj`` holds the (converted) object."""

    type: str
    rv: int
    obj: dict[str, Any] | None = None
    data: str | None = None
    stored: StoredEvent | None = None  # the store's event whose text ``data`` is

    def object(self) -> dict[str, Any]:
        """The object, as a fresh dictionary the caller may keep and mutate."""
        if self.data is not None:
            return json.loads(self.data)  # type: ignore[no-any-return]
        return json.loads(json.dumps(self.obj))  # type: ignore[no-any-return]

    def shared_object(self) -> dict[str, Any]:
        """The object parsed once for every in-process consumer of the event (the store
        event's cached parse): never mutate it. A converted object is copied, as
        :meth:`object` does."""
        if self.stored is not None:
            return self.stored.obj()
        return self.object()


class WatchStream:
    def __init__(self, res: Resource, strategy: Strategy, namespace: str | None, pred: Predicate | None,
                 watcher: Watcher, initial: list[WatchItem], since: int) -> None:
        self.res = res
        self._strategy = strategy
        self._convert = type(strategy).from_storage is not Strategy.from_storage
        self.namespace = namespace
        self._pred = pred
        self._watcher = watcher
        self._pending = initial
        self.since = since
        self.last_rv = since
        # with a selector: whether the version of each object this stream last judged
        # matched it. That version is the next MODIFIED event's object-before (the stream
        # judges every event of its kind in revision order), so its text need not be parsed
        # again; an object last changed before the stream began is judged from ``prev``.
        self._matched: dict[tuple[str, str], bool] = {}

    @property
    def closed(self) -> bool:
        return self._watcher.closed

    @property
    def overflowed(self) -> bool:
        return self._watcher.overflowed

    def set_notify(self, fn: Callable[[], None] | None) -> None:
        self._watcher.set_notify(fn)

    def close(self) -> None:
        self._watcher.close()

    def poll(self, max_bytes: int | None = None) -> list[WatchItem]:
        """The events available now (initial events first), without waiting; with
        ``max_bytes``, about that much event text at most (see :attr:`pending`)."""
        events, seen = self._watcher.drain(max_bytes)
        return self._take(events, seen)

    @property
    def pending(self) -> bool:
        """Whether a bounded :meth:`poll` left events to take."""
        return self._watcher.pending

    def on_overflow(self, fn: Callable[[], None] | None) -> None:
        """Call ``fn`` (from the store's writer thread) if the watch is ended for falling behind."""
        self._watcher.on_overflow = fn

    def next(self, timeout: float | None = None) -> list[WatchItem]:
        """Wait up to ``timeout`` seconds for events (for threads in this process)."""
        if self._pending:
            return self.poll()
        events, seen = self._watcher.get(timeout)
        return self._take(events, seen)

    def bookmark(self, annotations: dict[str, str] | None = None) -> WatchItem:
        meta: dict[str, Any] = {"resourceVersion": str(self.last_rv)}
        if annotations:
            meta["annotations"] = annotations
        return WatchItem(BOOKMARK, self.last_rv, {"kind": self.res.kind, "apiVersion": self.res.api_version,
                                                  "metadata": meta})

    def _take(self, events: list[StoredEvent], seen: int) -> list[WatchItem]:
        out, self._pending = self._pending, []
        for ev in events:
            item = self._item(ev)
            if item is not None:
                out.append(item)
        self.last_rv = max(self.last_rv, seen)
        return out

    def _view(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self._strategy.from_storage(obj) if self._convert else obj

    def _item(self, ev: StoredEvent) -> WatchItem | None:
        if ev.rv <= self.since or (self.namespace and ev.namespace != self.namespace):
            return None
        if self._pred is None:
            if self._convert:
                return WatchItem(ev.type, ev.rv, self._view(ev.obj()))
            return WatchItem(ev.type, ev.rv, None, ev.data, ev)
        cur = self._view(ev.obj())
        now = self._pred(cur)
        before = now
        key = (ev.namespace, ev.name)
        if ev.type == MODIFIED:
            judged = self._matched.get(key)
            if judged is None:
                prev = ev.prev_obj()
                judged = prev is not None and self._pred(self._view(prev))
            before = judged
        if ev.type == DELETED:
            self._matched.pop(key, None)
        else:
            self._matched[key] = now
        if not now and not before:
            return None
        typ = ev.type
        if ev.type == MODIFIED:
            typ = MODIFIED if now and before else (ADDED if now else DELETED)
        if self._convert:
            return WatchItem(typ, ev.rv, cur)
        return WatchItem(typ, ev.rv, None, ev.data, ev)


def open_watch(reg: "Registry", res: Resource | str, namespace: str | None = None, *,
               resource_version: str | None = None, label_selector: str = "", field_selector: str = "",
               send_initial_events: bool | None = None, max_bytes: int | None = None) -> WatchStream:
    """Start a watch; raises ApiError 400 for bad selectors and 410 for a compacted start
    (or one whose changes since hold more than ``max_bytes``, the watcher's bound on
    undelivered event text; ``None``: bounded by the number of events only)."""
    res = reg.resource(res)
    strategy = reg.strategy(res)
    pred = predicate(res, label_selector, field_selector)
    ns = namespace if res.namespaced and namespace else None
    rv = (resource_version or "").strip()
    if rv and not rv.isdigit():
        raise E.bad_request(f"invalid resourceVersion {rv!r}")
    synthetic = send_initial_events if send_initial_events is not None else rv in ("", "0")
    for _ in range(3):
        try:
            if synthetic:
                view_pred = None if pred is None else (lambda o: pred(strategy.from_storage(o)))
                page = reg.store.list(res.storage, ns, predicate=view_pred)
                watcher = reg.store.watch([res.storage], page.rv, max_bytes)
                initial = [WatchItem(ADDED, page.rv, strategy.from_storage(o)) for o in page.items]
                stream = WatchStream(res, strategy, ns, pred, watcher, initial, page.rv)
                if send_initial_events:
                    stream._pending.append(stream.bookmark({INITIAL_EVENTS_END: "true"}))
                return stream
            since = int(rv) if rv not in ("", "0") else reg.store.rv
            return WatchStream(res, strategy, ns, pred, reg.store.watch([res.storage], since, max_bytes), [], since)
        except Expired as exc:
            if synthetic:
                continue  # compacted between the list and the watch: list again
            raise E.gone(exc.message) from None
    raise E.internal("could not start a watch: the change log is being compacted too fast")


__all__ = ["BOOKMARK", "DELETED", "ERROR", "INITIAL_EVENTS_END", "WatchItem", "WatchStream", "open_watch"]
